/* floor of `state-get FILE NAME`: open, map, validate the whole document,
 * print the top-level member's value (a string without its quotes) */
#include "floor.h"

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open");
  struct text v = member(map_fd(fd), argv[2]);
  if (!v.n) return 1;
  char out[4096];
  size_t n = 0;
  const char *p = v.p;
  size_t len = v.n;
  if (*p == '"') p++, len -= 2;
  if (len > sizeof out - 1) len = sizeof out - 1;
  memcpy(out, p, len);
  n = len;
  out[n++] = '\n';
  write_all(1, out, n);
  return 0;
}
