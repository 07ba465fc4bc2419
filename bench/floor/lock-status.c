/* floor of `lock-status LOCK`: the record read and validated, the owner's
 * liveness read from /proc, one line printed */
#include "lock-record.h"

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  char buf[4096], line[128];
  size_t len;
  long pid = lock_owner(argv[1], buf, sizeof buf, &len);
  if (!pid) return 1;
  int n = snprintf(line, sizeof line, "%s: held by pid %ld (%s)\n", argv[1], pid, start_time(pid) ? "alive" : "dead");
  write_all(1, line, (size_t)n);
  return 0;
}
