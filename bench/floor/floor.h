/* The floor: what each loopkit job costs when a program makes only the
 * system calls the job needs and validates what loopkit validates (the whole
 * JSON document: syntax, UTF-8, depth up to 1000), and nothing more. Built
 * static by bench/floor.sh; each job is one small program beside this file.
 * Shared helpers, header-only so that each program is one translation unit. */
#ifndef FLOOR_H
#define FLOOR_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline void die(const char *what) {
  dprintf(2, "floor: %s: %s\n", what, strerror(errno));
  exit(4);
}

static inline void write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      die("write");
    }
    p += w;
    n -= (size_t)w;
  }
}

/* a file's bytes: mapped when it has any */
struct text {
  const char *p;
  size_t n;
};
static inline struct text map_fd(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) die("fstat");
  struct text t = {"", (size_t)st.st_size};
  if (t.n) {
    void *m = mmap(NULL, t.n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m == MAP_FAILED) die("mmap");
    t.p = m;
  }
  return t;
}

/* ---- validation: RFC 8259, UTF-8 checked, depth at most 1000 ---------- */
struct scan {
  const unsigned char *p, *end;
  int depth;
};
static inline int fail_json(void) {
  dprintf(2, "floor: not valid JSON\n");
  exit(3);
}
static inline void ws(struct scan *s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r')) s->p++;
}
static inline void utf8(struct scan *s) {
  unsigned c = *s->p;
  int n = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
  if (c < 0xc2 || c > 0xf4 || s->end - s->p <= n) fail_json();
  unsigned v = c & (0x3f >> n);
  for (int i = 1; i <= n; i++) {
    if ((s->p[i] & 0xc0) != 0x80) fail_json();
    v = v << 6 | (s->p[i] & 0x3f);
  }
  if ((n == 2 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 3 && (v < 0x10000 || v > 0x10ffff)))
    fail_json();
  s->p += n + 1;
}
static inline void string(struct scan *s) {
  s->p++;
  for (;;) {
    if (s->p >= s->end) fail_json();
    unsigned c = *s->p;
    if (c == '"') {
      s->p++;
      return;
    }
    if (c < 0x20) fail_json();
    if (c >= 0x80) {
      utf8(s);
      continue;
    }
    if (c == '\\') {
      if (++s->p >= s->end) fail_json();
      if (*s->p == 'u') {
        if (s->end - s->p < 5) fail_json();
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", s->p[i]) || !s->p[i]) fail_json();
        s->p += 5;
        continue;
      }
      if (!strchr("\"\\/bfnrt", *s->p) || !*s->p) fail_json();
    }
    s->p++;
  }
}
static inline int digit(struct scan *s) { return s->p < s->end && *s->p >= '0' && *s->p <= '9'; }
static inline void number(struct scan *s) {
  if (*s->p == '-') s->p++;
  if (!digit(s)) fail_json();
  if (*s->p == '0') s->p++;
  else
    while (digit(s)) s->p++;
  if (s->p < s->end && *s->p == '.') {
    s->p++;
    if (!digit(s)) fail_json();
    while (digit(s)) s->p++;
  }
  if (s->p < s->end && (*s->p == 'e' || *s->p == 'E')) {
    s->p++;
    if (s->p < s->end && (*s->p == '+' || *s->p == '-')) s->p++;
    if (!digit(s)) fail_json();
    while (digit(s)) s->p++;
  }
}
static inline void value(struct scan *s);
static inline void items(struct scan *s, char close, int object) {
  if (++s->depth > 1000) fail_json();
  s->p++;
  ws(s);
  if (s->p < s->end && *s->p == close) {
    s->p++;
    s->depth--;
    return;
  }
  for (;;) {
    if (object) {
      if (s->p >= s->end || *s->p != '"') fail_json();
      string(s);
      ws(s);
      if (s->p >= s->end || *s->p != ':') fail_json();
      s->p++;
    }
    value(s);
    ws(s);
    if (s->p >= s->end) fail_json();
    if (*s->p == close) {
      s->p++;
      s->depth--;
      return;
    }
    if (*s->p != ',') fail_json();
    s->p++;
    ws(s);
  }
}
static inline void value(struct scan *s) {
  ws(s);
  if (s->p >= s->end) fail_json();
  switch (*s->p) {
    case '{': items(s, '}', 1); return;
    case '[': items(s, ']', 0); return;
    case '"': string(s); return;
    case 't': if (s->end - s->p >= 4 && !memcmp(s->p, "true", 4)) { s->p += 4; return; } break;
    case 'f': if (s->end - s->p >= 5 && !memcmp(s->p, "false", 5)) { s->p += 5; return; } break;
    case 'n': if (s->end - s->p >= 4 && !memcmp(s->p, "null", 4)) { s->p += 4; return; } break;
    default: number(s); return;
  }
  fail_json();
}
/* validates the whole text; returns the span of the top-level member name's
 * value (len 0 when absent) */
static inline struct text member(struct text t, const char *name) {
  struct scan s = {(const unsigned char *)t.p, (const unsigned char *)t.p + t.n, 0};
  struct text found = {NULL, 0};
  size_t len = strlen(name);
  ws(&s);
  if (s.p >= s.end || *s.p != '{') fail_json();
  s.depth = 1;
  s.p++;
  ws(&s);
  int first = 1;
  while (s.p < s.end && *s.p != '}') {
    if (!first) {
      if (*s.p != ',') fail_json();
      s.p++;
      ws(&s);
    }
    first = 0;
    const unsigned char *k = s.p;
    if (s.p >= s.end || *s.p != '"') fail_json();
    string(&s);
    int match = (size_t)(s.p - k) == len + 2 && !memcmp(k + 1, name, len);
    ws(&s);
    if (s.p >= s.end || *s.p != ':') fail_json();
    s.p++;
    ws(&s);
    const unsigned char *v = s.p;
    value(&s);
    if (match) found = (struct text){(const char *)v, (size_t)(s.p - v)};
    ws(&s);
  }
  if (s.p >= s.end) fail_json();
  s.p++;
  ws(&s);
  if (s.p != s.end) fail_json();
  return found;
}

/* the members of an object, validated as they are read: members_open at its
 * '{', then members_next until it returns 0 (then s->p is past the '}') */
static inline void members_open(struct scan *s) {
  ws(s);
  if (s->p >= s->end || *s->p != '{') fail_json();
  s->p++;
  s->depth++;
  ws(s);
  if (s->p < s->end && *s->p == ',') fail_json();
}
static inline int members_next(struct scan *s, struct text *key, struct text *val) {
  if (s->p >= s->end) fail_json();
  if (*s->p == '}') {
    s->p++;
    s->depth--;
    return 0;
  }
  if (*s->p == ',') {
    s->p++;
    ws(s);
  }
  const unsigned char *k = s->p;
  if (s->p >= s->end || *s->p != '"') fail_json();
  string(s);
  *key = (struct text){(const char *)k + 1, (size_t)(s->p - k) - 2};
  ws(s);
  if (s->p >= s->end || *s->p != ':') fail_json();
  s->p++;
  ws(s);
  const unsigned char *v = s->p;
  value(s);
  *val = (struct text){(const char *)v, (size_t)(s->p - v)};
  ws(s);
  if (s->p < s->end && *s->p != ',' && *s->p != '}') fail_json();
  return 1;
}
static inline int text_is(struct text t, const char *lit) { return t.n == strlen(lit) && !memcmp(t.p, lit, t.n); }

/* ISO 8601 UTC of t, as loopkit writes it */
static inline void iso(time_t t, char out[32]) {
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* a process's start time (field 22 of /proc/PID/stat), 0 when it is gone */
static inline unsigned long long start_time(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *p = strrchr(buf, ')');
  if (!p) return 0;
  for (int field = 2; field < 22 && p; field++) p = strchr(p + 1, ' ');
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* the boot id, as locks record it */
static inline void boot_id(char out[40]) {
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read(fd, out, 36);
  if (fd >= 0) close(fd);
  out[n == 36 ? 36 : 0] = 0;
}

/* data written to a new unnamed file in dir, synced: linked at name by the
 * caller (linkat: exclusive; or a temp name and rename: replacing) */
static inline int unnamed(const char *dir, const char *data, size_t n) {
  int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) die("open O_TMPFILE");
  write_all(fd, data, n);
  if (fsync(fd) != 0) die("fsync");
  return fd;
}
static inline void sync_dir(const char *dir) {
  int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d < 0 || fsync(d) != 0) die("fsync folder");
  close(d);
}
/* a growing file (a log) read whole as it stands, for --last: opened
 * without following links, looked at under a shared flock, a regular file
 * of at most n bytes (else exit 4); returns its size */
static inline ssize_t read_small_log(const char *path, char *buf, size_t n) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) exit(1);
  struct stat st;
  if (flock(fd, LOCK_SH) != 0 || fstat(fd, &st) != 0 || flock(fd, LOCK_UN) != 0) die("flock");
  if (!S_ISREG(st.st_mode) || st.st_size > (off_t)n) exit(4);
  ssize_t got = pread(fd, buf, (size_t)st.st_size, 0);
  if (got != st.st_size) die("pread");
  close(fd);
  return got;
}

#endif
