/* floor of `lock-acquire --pid P LOCK`: the record written to an unnamed
 * file, synced, linked at LOCK (fails when it exists), the folder synced */
#include "lock-record.h"

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  long pid = atol(argv[2]);
  char rec[512], link[64];
  size_t n = lock_record(rec, sizeof rec, "a", pid, 0);
  int fd = unnamed(".", rec, n);
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  if (linkat(AT_FDCWD, link, AT_FDCWD, argv[3], AT_SYMLINK_FOLLOW) != 0) return errno == EEXIST ? 1 : 4;
  sync_dir(".");
  return 0;
}
