/* floor of `lock-heartbeat --pid P LOCK`: the record read, validated and its
 * owner checked; a new one written beside it, synced, renamed over it, the
 * folder synced */
#include "lock-record.h"

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  long pid = atol(argv[2]);
  char buf[4096], rec[512], link[64];
  size_t len;
  if (lock_owner(argv[3], buf, sizeof buf, &len) != pid) return 1;
  size_t n = lock_record(rec, sizeof rec, "a", pid, 0);
  int fd = unnamed(".", rec, n);
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, link, AT_FDCWD, ".a.lock.floor", AT_SYMLINK_FOLLOW) != 0) die("linkat");
  if (rename(".a.lock.floor", argv[3]) != 0) die("rename");
  sync_dir(".");
  return 0;
}
