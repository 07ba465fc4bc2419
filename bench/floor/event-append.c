/* floor of `event-append FILE TYPE`: the log opened for appending and
 * locked, its last line read for the sequence number, one line written in
 * one write, synced */
#include "floor.h"

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) die("open");
  if (flock(fd, LOCK_EX) != 0) die("flock");
  struct stat st;
  if (fstat(fd, &st) != 0) die("fstat");
  char tail[4096], line[1024], date[32];
  long long seq = 0;
  off_t at = st.st_size > (off_t)sizeof tail ? st.st_size - (off_t)sizeof tail : 0;
  ssize_t n = st.st_size ? pread(fd, tail, (size_t)(st.st_size - at), at) : 0;
  if (n < 0) die("pread");
  if (n > 1) {
    tail[n - 1] = 0;
    char *last = strrchr(tail, '\n');
    char *s = strstr(last ? last : tail, "\"seq\":");
    if (s) seq = atoll(s + 6);
  }
  iso(time(NULL), date);
  int len = snprintf(line, sizeof line, "{\"seq\":%lld,\"ts\":\"%s\",\"type\":\"%s\"}\n", seq + 1, date, argv[2]);
  write_all(fd, line, (size_t)len);
  if (fsync(fd) != 0) die("fsync");
  return 0;
}
