/* floor of `progress-show --last N FILE`: the file's size taken under a
 * shared flock, the file read in one pread, the header (up to the first
 * "---" line) and the newest N entries (the text after a "---" line up to
 * the next, not only blank lines) printed in one writev */
#include <sys/uio.h>

#include "floor.h"

static int is_rule(const char *p, const char *end) { return end - p >= 3 && !memcmp(p, "---", 3) && (end - p == 3 || p[3] == '\n'); }
static int blank(const char *p, const char *e) {
  for (; p < e; p++)
    if (*p != '\n' && *p != ' ' && *p != '\t') return 0;
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4 || strcmp(argv[1], "--last")) return 2;
  long want = atol(argv[2]);
  static char buf[1 << 16];
  if (want > 64) return 4; /* the floor of a small file */
  ssize_t got = read_small_log(argv[3], buf, sizeof buf);
  char *end = buf + got, *head = buf;
  while (head < end && !is_rule(head, end)) {
    char *nl = memchr(head, '\n', (size_t)(end - head));
    head = nl ? nl + 1 : end;
  }
  if (head < end) head += head + 3 < end ? 4 : 3;
  /* entries from the end: each runs from after a rule line through the
   * next rule line (or the end), skipped when only blank lines */
  struct iovec iov[65] = {{buf, (size_t)(head - buf)}};
  long found = 0;
  char *stop = end;
  while (found < want && stop > head) {
    char *p = stop, *start = head, *close = stop;
    for (int first = 1; p > head; first = 0) {
      char *q = p - 1;
      while (q > head && q[-1] != '\n') q--;
      if (is_rule(q, end)) {
        if (!first) {
          start = p;
          break;
        }
        close = q;
      }
      p = q;
    }
    if (!blank(start, close)) iov[1 + found++] = (struct iovec){start, (size_t)(stop - start)};
    stop = start;
  }
  /* oldest first */
  for (long i = 0, j = found - 1; i < j; i++, j--) {
    struct iovec t = iov[1 + i];
    iov[1 + i] = iov[1 + j], iov[1 + j] = t;
  }
  if (writev(1, iov, (int)(1 + found)) < 0) die("writev");
  return 0;
}
