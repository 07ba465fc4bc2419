/* floor of `ctx-resume --dir DIR`: the folder listed once, the saves
 * (mdan-save-EPOCH[-N].json) ordered newest first by their names; the newest
 * regular file of the caller, flocked, read in one pread, validated, made in
 * the working folder (project.folder) and holding the format's fields, has
 * metadata.resume_count's bytes replaced; the new text is written to a
 * temporary file beside it, mode 0600, synced, renamed over it, the folder
 * synced, and phases.current printed */
#include <dirent.h>
#include <sys/auxv.h>
#include <sys/uio.h>

#include "floor.h"

struct save {
  long long epoch, n;
  char name[256];
};
static int newest_first(const void *a, const void *b) {
  const struct save *x = a, *y = b;
  if (x->epoch != y->epoch) return x->epoch < y->epoch ? 1 : -1;
  return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}
/* a save's name read: 0 when it is not one */
static int save_name(const char *name, struct save *s) {
  char *end;
  if (strncmp(name, "mdan-save-", 10) || name[10] < '0' || name[10] > '9') return 0;
  s->epoch = strtoll(name + 10, &end, 10);
  s->n = *end == '-' ? strtoll(end + 1, &end, 10) : 1;
  if (strcmp(end, ".json")) return 0;
  strcpy(s->name, name);
  return 1;
}

/* the value of each of names in the object obj (validated); 0 when one is missing */
static int fields(struct text obj, const char *const *names, struct text *vals) {
  struct scan s = {(const unsigned char *)obj.p, (const unsigned char *)obj.p + obj.n, 0};
  struct text k, v;
  int want = 0, got = 0;
  while (names[want]) vals[want++] = (struct text){NULL, 0};
  members_open(&s);
  while (members_next(&s, &k, &v))
    for (int i = 0; i < want; i++)
      if (text_is(k, names[i])) got += !vals[i].p, vals[i] = v;
  return got == want;
}

static const char *const top[] = {"version", "mode", "timestamp", "project", "phases", "context", "debates",
                                  "errors", "quality_gates", "configuration", "metadata", NULL};
static const char *const project[] = {"name", "description", "tech_stack", "folder", NULL};
static const char *const phases[] = {"current", "completed", "status", NULL};
static const char *const context[] = {"token_usage", "conversation_history", "artifacts", "decisions", NULL};
static const char *const usage[] = {"total", "limit", "percentage", NULL};
static const char *const configuration[] = {"token_limit", "save_threshold", "output_dir", "log_level",
                                            "fail_fast",   "debate_enabled", NULL};
static const char *const metadata[] = {"created_at", "updated_at", "save_count", "resume_count", NULL};

int main(int argc, char **argv) {
  if (argc != 3 || strcmp(argv[1], "--dir")) return 2;
  static char folder[4096], buf[1 << 16], ents[32768];
  static struct save saves[64];
  if (!getcwd(folder, sizeof folder)) die("getcwd");
  int dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) die("open folder");
  int count = 0;
  for (ssize_t n; (n = getdents64(dir, ents, sizeof ents)) > 0;)
    for (ssize_t at = 0; at < n;) {
      struct dirent64 *e = (struct dirent64 *)(ents + at);
      if (count < 64) count += save_name(e->d_name, &saves[count]);
      at += e->d_reclen;
    }
  qsort(saves, (size_t)count, sizeof *saves, newest_first);
  uid_t me = geteuid();
  for (int i = 0; i < count; i++) {
    int fd = openat(dir, saves[i].name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) continue;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me || st.st_size > (off_t)sizeof buf ||
        flock(fd, LOCK_EX) != 0) {
      close(fd);
      continue;
    }
    ssize_t got = pread(fd, buf, (size_t)st.st_size, 0);
    if (got <= 0) die("pread");
    struct text doc = {buf, (size_t)got}, t[12], p[5], ph[4], c[5], u[4], cf[7], m[5];
    if (!fields(doc, top, t) || !fields(t[3], project, p) || !fields(t[4], phases, ph) || !fields(t[5], context, c) ||
        !fields(c[0], usage, u) || !fields(t[9], configuration, cf) || !fields(t[10], metadata, m))
      return 3; /* the floor's saves are whole */
    if (p[3].n != strlen(folder) + 2 || memcmp(p[3].p + 1, folder, p[3].n - 2)) {
      close(fd);
      continue;
    }
    if (t[0].n < 3 || t[0].p[1] != '1') return 3;
    char num[32], tmp[64];
    int len = snprintf(num, sizeof num, "%lld", atoll(m[3].p) + 1);
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    snprintf(tmp, sizeof tmp, ".floor.%02x%02x%02x%02x%02x%02x.tmp", r[0], r[1], r[2], r[3], r[4], r[5]);
    int out = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) die("open temporary file");
    size_t head = (size_t)(m[3].p - buf);
    struct iovec iov[3] = {{buf, head}, {num, (size_t)len}, {(void *)(m[3].p + m[3].n), (size_t)got - head - m[3].n}};
    if (writev(out, iov, 3) != (ssize_t)((size_t)got - m[3].n + (size_t)len)) die("writev");
    if (fchmod(out, 0600) != 0 || fsync(out) != 0) die("fsync");
    if (renameat(dir, tmp, dir, saves[i].name) != 0) die("rename");
    if (fsync(dir) != 0) die("fsync folder");
    close(out);
    close(fd);
    char line[256];
    len = snprintf(line, sizeof line, "%.*s\n", (int)ph[0].n - 2, ph[0].p + 1);
    write_all(1, line, (size_t)len);
    return 0;
  }
  return 1;
}
