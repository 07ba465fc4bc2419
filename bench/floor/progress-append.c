/* floor of `progress-append --id X FILE TEXT`: the file opened for appending
 * and locked, its tail read (a torn entry is closed), one entry written in
 * one write, synced */
#include "floor.h"

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  int fd = open(argv[3], O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) die("open");
  if (flock(fd, LOCK_EX) != 0) die("flock");
  struct stat st;
  if (fstat(fd, &st) != 0) die("fstat");
  char tail[2] = "\n", entry[8192], date[32];
  int rfd = -1;
  if (st.st_size > 0 && (rfd = open(argv[3], O_RDONLY | O_CLOEXEC)) >= 0) {
    if (pread(rfd, tail, 1, st.st_size - 1) != 1) die("pread");
    close(rfd);
  }
  iso(time(NULL), date);
  int n = snprintf(entry, sizeof entry, "%s\n## %.10s - %s\n%s\n\n---\n", tail[0] == '\n' ? "" : "\n", date, argv[2],
                   argv[4]);
  write_all(fd, entry, (size_t)n);
  if (fsync(fd) != 0) die("fsync");
  return 0;
}
