/* the lock record loopkit writes, for the lock floors */
#include <sys/utsname.h>

#include "floor.h"

static inline size_t lock_record(char *out, size_t cap, const char *session, long pid, time_t started) {
  struct utsname u;
  uname(&u);
  char boot[40], s[32], now[32];
  boot_id(boot);
  time_t t = time(NULL);
  iso(started ? started : t, s);
  iso(t, now);
  int n = snprintf(out, cap,
                   "{\"session\":\"%s\",\"pid\":%ld,\"host\":\"%s\",\"pid_start\":%llu,\"started_at\":\"%s\","
                   "\"heartbeat\":\"%s\",\"heartbeat_epoch\":%lld,\"boot_id\":\"%s\"}\n",
                   session, pid, u.nodename, start_time(pid), s, now, (long long)t, boot);
  return (size_t)n;
}

/* the record at path, read and validated: the owner's pid, 0 when it is missing */
static inline long lock_owner(const char *path, char *buf, size_t cap, size_t *len) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, cap);
  close(fd);
  if (n <= 0) return 0;
  *len = (size_t)n;
  struct text v = member((struct text){buf, (size_t)n}, "pid");
  return v.n ? atol(v.p) : 0;
}
