/* floor of `state-set [--no-sync] FILE NAME+=1`: the file locked, mapped and
 * validated whole, the number's bytes replaced, the new text written to a
 * temporary file beside it, synced, renamed over it, the folder synced */
#include <sys/auxv.h>
#include <sys/uio.h>

#include "floor.h"

int main(int argc, char **argv) {
  int sync = 1, a = 1;
  if (argc > 1 && !strcmp(argv[1], "--no-sync")) sync = 0, a = 2;
  if (argc != a + 2) return 2;
  const char *file = argv[a];
  char name[256];
  const char *plus = strstr(argv[a + 1], "+=");
  if (!plus || plus - argv[a + 1] >= (long)sizeof name) return 2;
  memcpy(name, argv[a + 1], plus - argv[a + 1]);
  name[plus - argv[a + 1]] = 0;
  long long add = atoll(plus + 2);
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open");
  if (flock(fd, LOCK_EX) != 0) die("flock");
  struct text t = map_fd(fd);
  struct text v = member(t, name);
  if (!v.n) return 3;
  char num[32];
  int len = snprintf(num, sizeof num, "%lld", atoll(v.p) + add);
  /* a name no other writer can guess, from the kernel's AT_RANDOM bytes */
  const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
  char tmp[64];
  snprintf(tmp, sizeof tmp, ".floor.%02x%02x%02x%02x%02x%02x.tmp", r[0], r[1], r[2], r[3], r[4], r[5]);
  int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) die("open temporary file");
  size_t head = (size_t)(v.p - t.p);
  struct iovec iov[3] = {{(void *)t.p, head}, {num, (size_t)len}, {(void *)(v.p + v.n), t.n - head - v.n}};
  if (writev(out, iov, 3) != (ssize_t)(t.n - v.n + (size_t)len)) die("writev");
  if (sync && fsync(out) != 0) die("fsync");
  if (rename(tmp, file) != 0) die("rename");
  if (sync) sync_dir(".");
  return 0;
}
