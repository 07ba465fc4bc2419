/* floor of `lock-release --pid P LOCK`: the record read and validated, its
 * owner checked, the file removed, the folder synced */
#include "lock-record.h"

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  char buf[4096];
  size_t len;
  if (lock_owner(argv[3], buf, sizeof buf, &len) != atol(argv[2])) return 1;
  if (unlink(argv[3]) != 0) die("unlink");
  sync_dir(".");
  return 0;
}
