/* floor of `event-show --last N FILE`: the log's size taken under a shared
 * flock, the log read in one pread, lines validated from the end until N
 * events are found (an object with an integer seq), each printed as
 * "SEQ TS TYPE SESSION KEY=VALUE...", all in one write */
#include "floor.h"

struct event {
  struct text seq, ts, type, session, k[32], v[32];
  int n;
};

/* a line read as an event: 0 when it is not one */
static int read_event(struct text line, struct event *e) {
  struct scan s = {(const unsigned char *)line.p, (const unsigned char *)line.p + line.n, 0};
  struct text k, v;
  memset(e, 0, sizeof *e);
  members_open(&s);
  while (members_next(&s, &k, &v)) {
    if (text_is(k, "seq")) e->seq = v;
    else if (text_is(k, "ts")) e->ts = v;
    else if (text_is(k, "type")) e->type = v;
    else if (text_is(k, "session")) e->session = v;
    else if (e->n < 32) e->k[e->n] = k, e->v[e->n++] = v;
  }
  ws(&s);
  if (s.p != s.end) fail_json();
  if (!e->seq.n) return 0;
  for (size_t i = *e->seq.p == '-'; i < e->seq.n; i++)
    if (e->seq.p[i] < '0' || e->seq.p[i] > '9') return 0;
  return 1;
}

/* a string's value bare, or as its JSON text when it holds a space, quote,
 * backslash or control character; other values as their JSON text */
static char *put_value(char *o, struct text v) {
  int bare = v.n >= 2 && v.p[0] == '"';
  for (size_t i = 1; bare && i + 1 < v.n; i++)
    if ((unsigned char)v.p[i] <= ' ' || v.p[i] == '"' || v.p[i] == '\\') bare = 0;
  if (bare) v.p++, v.n -= 2;
  memcpy(o, v.p, v.n);
  return o + v.n;
}

static char *put_event(char *o, const struct event *e) {
  o = put_value(o, e->seq);
  *o++ = ' ';
  o = put_value(o, e->ts);
  *o++ = ' ';
  o = put_value(o, e->type);
  *o++ = ' ';
  o = put_value(o, e->session);
  for (int i = 0; i < e->n; i++) {
    *o++ = ' ';
    memcpy(o, e->k[i].p, e->k[i].n);
    o += e->k[i].n;
    *o++ = '=';
    o = put_value(o, e->v[i]);
  }
  *o++ = '\n';
  return o;
}

int main(int argc, char **argv) {
  if (argc != 4 || strcmp(argv[1], "--last")) return 2;
  long want = atol(argv[2]);
  static char buf[1 << 16], out[1 << 16];
  static struct event events[64];
  if (want > 64) return 4; /* the floor of a small file */
  ssize_t got = read_small_log(argv[3], buf, sizeof buf);
  /* the newest N events, found from the end; printed oldest first */
  long found = 0;
  char *end = buf + got;
  while (end > buf && found < want) {
    char *start = end - 1;
    while (start > buf && start[-1] != '\n') start--;
    struct text line = {start, (size_t)(end - start - (end[-1] == '\n'))};
    if (line.n) found += read_event(line, &events[found]);
    end = start;
  }
  if (!found) return 1;
  char *o = out;
  while (found > 0) o = put_event(o, &events[--found]);
  write_all(1, out, (size_t)(o - out));
  return 0;
}
