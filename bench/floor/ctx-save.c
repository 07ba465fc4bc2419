/* floor of `ctx-save --dir DIR --phase P --tokens T`: a fresh MDAN-AUTO
 * save (every field, the phase's statuses, the token usage, the working
 * folder as project.folder) printed in jq's 2-space layout, its strings
 * scanned for secrets, written to an unnamed file in DIR (created 0700 when
 * missing), mode 0600, synced, linked at DIR/mdan-save-EPOCH.json (a name
 * taken as .json.gz is passed over), the folder synced, one line printed */
#include "floor.h"

static const char *const phases[] = {"LOAD", "DISCOVER", "PLAN", "ARCHITECT", "IMPLEMENT", "TEST", "DEPLOY", "DOC"};

/* s as a JSON string's content (quotes, backslashes, controls escaped) */
static char *put_escaped(char *o, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') *o++ = '\\', *o++ = (char)c;
    else if (c < 0x20) o += sprintf(o, "\\u%04x", c);
    else *o++ = (char)c;
  }
  return o;
}

/* the secrets' prefixes the floor looks for in each string */
static int has_secret(const char *p, size_t n) {
  static const char *const prefixes[] = {"sk-", "ghp_", "github_pat_", "AKIA", "xoxb-", "-----BEGIN", "eyJ"};
  for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++)
    if (memmem(p, n, prefixes[k], strlen(prefixes[k]))) return 1;
  return 0;
}

static size_t document(char *out, const char *phase, long long tokens, const char *now, const char *folder) {
  int at = -1;
  for (int i = 0; i < 8; i++)
    if (!strcasecmp(phase, phases[i])) at = i;
  if (at < 0) exit(2);
  char *o = out, completed[256] = "", *c = completed;
  o += sprintf(o, "{\n  \"version\": \"1.0\",\n  \"mode\": \"auto\",\n  \"timestamp\": \"%s\",\n  \"project\": {\n"
                  "    \"name\": \"\",\n    \"description\": \"\",\n    \"tech_stack\": {},\n    \"folder\": \"",
               now);
  o = put_escaped(o, folder);
  for (int i = 0; i < at; i++) c += sprintf(c, "%s\n      \"%s\"", i ? "," : "", phases[i]);
  o += sprintf(o, "\"\n  },\n  \"phases\": {\n    \"current\": \"%s\",\n    \"completed\": %s%s%s,\n    \"status\": {\n",
               phases[at], at ? "[" : "[]", completed, at ? "\n    ]" : "");
  for (int i = 0; i < 8; i++)
    o += sprintf(o, "      \"%s\": \"%s\"%s\n", phases[i], i < at ? "complete" : i == at ? "in_progress" : "pending",
                 i < 7 ? "," : "");
  o += sprintf(o, "    }\n  },\n  \"context\": {\n    \"token_usage\": {\n      \"total\": %lld,\n      \"limit\": 128000,\n"
                  "      \"percentage\": %.4g\n    },\n    \"conversation_history\": [],\n    \"artifacts\": {},\n"
                  "    \"decisions\": []\n  },\n  \"debates\": [],\n  \"errors\": [],\n  \"quality_gates\": {\n",
               tokens, (double)(long long)(tokens / 128000.0 * 10000 + 0.5) / 10000);
  for (int i = 0; i < 8; i++) o += sprintf(o, "    \"%s\": false%s\n", phases[i], i < 7 ? "," : "");
  o += sprintf(o, "  },\n  \"configuration\": {\n    \"token_limit\": 128000,\n    \"save_threshold\": 0.8,\n"
                  "    \"output_dir\": \"./mdan-auto-output\",\n    \"log_level\": \"INFO\",\n    \"fail_fast\": true,\n"
                  "    \"debate_enabled\": true\n  },\n  \"metadata\": {\n    \"created_at\": \"%s\",\n"
                  "    \"updated_at\": \"%s\",\n    \"save_count\": 1,\n    \"resume_count\": 0\n  }\n}\n",
               now, now);
  return (size_t)(o - out);
}

int main(int argc, char **argv) {
  if (argc != 7 || strcmp(argv[1], "--dir") || strcmp(argv[3], "--phase") || strcmp(argv[5], "--tokens")) return 2;
  char folder[4096], now[32], doc[8192], name[64], proc[32], line[4200];
  if (!getcwd(folder, sizeof folder)) die("getcwd");
  const char *fixed = getenv("LOOPKIT_NOW");
  time_t t = fixed ? (time_t)atoll(fixed) : time(NULL);
  iso(t, now);
  size_t n = document(doc, argv[4], atoll(argv[6]), now, folder);
  if (has_secret(doc, n)) return 3; /* the floor's saves hold none */
  int dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 && errno == ENOENT && mkdir(argv[2], 0700) == 0)
    dir = open(argv[2], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) die("open folder");
  int fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) die("open O_TMPFILE");
  write_all(fd, doc, n);
  if (fchmod(fd, 0600) != 0 || fsync(fd) != 0) die("fsync");
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  struct stat st;
  for (int k = 1;; k++) {
    int len = k == 1 ? snprintf(name, sizeof name, "mdan-save-%lld.json", (long long)t)
                     : snprintf(name, sizeof name, "mdan-save-%lld-%d.json", (long long)t, k);
    name[len] = 0;
    strcpy(name + len, ".gz");
    int gz_taken = fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    name[len] = 0;
    if (!gz_taken && linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) == 0) break;
    if (!gz_taken && errno != EEXIST) die("link");
  }
  if (fsync(dir) != 0) die("fsync folder");
  int len = snprintf(line, sizeof line, "CONTEXT SAVE %s/%s\n", argv[2], name);
  write_all(1, line, (size_t)len);
  return 0;
}
