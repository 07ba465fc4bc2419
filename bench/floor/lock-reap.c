/* floor of `lock-reap DIR`: the folder listed once; each "*.lock" opened
 * without following links, checked regular, read and validated, its owner
 * judged (same host and boot, pid alive with its start time, not a zombie);
 * a stale one judged again under the folder's flock and removed if it is
 * still the file judged; one line per removal, all in one write */
#include <dirent.h>
#include <sys/utsname.h>

#include "floor.h"

struct record {
  struct text pid, host, pid_start, boot_id, session, heartbeat_epoch;
};

/* the record of name in dir, read and validated; 0 when it is none */
static int read_record(int dir, const char *name, char *buf, size_t cap, struct record *r, struct stat *st) {
  int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = fstat(fd, st) == 0 && S_ISREG(st->st_mode) ? read(fd, buf, cap) : -1;
  close(fd);
  if (n <= 0) return 0;
  struct scan s = {(const unsigned char *)buf, (const unsigned char *)buf + n, 0};
  struct text k, v;
  memset(r, 0, sizeof *r);
  members_open(&s);
  while (members_next(&s, &k, &v)) {
    if (text_is(k, "pid")) r->pid = v;
    else if (text_is(k, "host")) r->host = v;
    else if (text_is(k, "pid_start")) r->pid_start = v;
    else if (text_is(k, "boot_id")) r->boot_id = v;
    else if (text_is(k, "session")) r->session = v;
    else if (text_is(k, "heartbeat_epoch")) r->heartbeat_epoch = v;
  }
  ws(&s);
  if (s.p != s.end) fail_json();
  return r->pid.n > 0;
}

/* why the record's owner is gone, or NULL when it is alive: another host's
 * by its heartbeat's age, this host's by its boot and process */
static const char *stale(const struct record *r, const char *host, const char *boot) {
  if (r->host.n >= 2 && (r->host.n - 2 != strlen(host) || memcmp(r->host.p + 1, host, r->host.n - 2)))
    return time(NULL) - atoll(r->heartbeat_epoch.p ? r->heartbeat_epoch.p : "0") > 120 ? "silent" : NULL;
  if (r->boot_id.n == 38 && memcmp(r->boot_id.p + 1, boot, 36)) return "earlier boot";
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", atol(r->pid.p));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "not running";
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return "not running";
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p || p[2] == 'Z' || p[2] == 'X') return "zombie";
  for (int field = 2; field < 22 && p; field++) p = strchr(p + 1, ' ');
  if (!p || (r->pid_start.n && strtoull(p + 1, NULL, 10) != strtoull(r->pid_start.p, NULL, 10))) return "pid reused";
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  struct utsname u;
  char boot[40], buf[65536], names[64][256], out[16384];
  uname(&u);
  boot_id(boot);
  int dir = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) die("open folder");
  /* the names first: removing while listing would disturb the listing */
  int count = 0;
  char ents[32768];
  for (ssize_t n; (n = getdents64(dir, ents, sizeof ents)) > 0;)
    for (ssize_t at = 0; at < n;) {
      struct dirent64 *e = (struct dirent64 *)(ents + at);
      size_t len = strlen(e->d_name);
      if (count < 64 && e->d_name[0] != '.' && len > 5 && len < 256 && !strcmp(e->d_name + len - 5, ".lock"))
        memcpy(names[count++], e->d_name, len + 1);
      at += e->d_reclen;
    }
  char *o = out;
  for (int i = 0; i < count; i++) {
    struct record r;
    struct stat st, now;
    const char *why;
    if (!read_record(dir, names[i], buf, sizeof buf, &r, &st) || !stale(&r, u.nodename, boot)) continue;
    if (flock(dir, LOCK_EX) != 0) die("flock");
    if (read_record(dir, names[i], buf, sizeof buf, &r, &st) && (why = stale(&r, u.nodename, boot)) &&
        fstatat(dir, names[i], &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino) {
      if (unlinkat(dir, names[i], 0) != 0) die("unlink");
      o += snprintf(o, (size_t)(out + sizeof out - o), "removed %s/%s: session '%.*s', pid %.*s on %.*s: pid %.*s is %s\n",
                    argv[1], names[i], (int)r.session.n - 2, r.session.p + 1, (int)r.pid.n, r.pid.p,
                    (int)r.host.n - 2, r.host.p + 1, (int)r.pid.n, r.pid.p, why);
    }
    if (flock(dir, LOCK_UN) != 0) die("flock");
  }
  write_all(1, out, (size_t)(o - out));
  return 0;
}
