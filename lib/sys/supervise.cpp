#include "sys/supervise.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "sys/clock.hpp"
#include "sys/error.hpp"
#include "sys/fd.hpp"
#include "sys/proc.hpp"

namespace loopkit {

namespace {
constexpr int termination_signals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t watched_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : termination_signals) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

// The child: the group's first member, its signals as a foreground command
// has them (a shell's background job starts with SIGINT and SIGQUIT ignored).
[[noreturn]] void exec_in_group(const std::vector<std::string>& argv, const sigset_t& mask, int report_fd) {
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE}) signal(s, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  // A background group that reads its terminal is stopped (SIGTTIN) and
  // would hang the engine unseen: a terminal on stdin becomes /dev/null.
  if (isatty(0)) {
    int null = open("/dev/null", O_RDONLY);
    if (null > 0) {
      dup2(null, 0);
      close(null);
    }
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  int e = errno;
  (void)!write(report_fd, &e, sizeof e);
  _exit(e == ENOENT ? 127 : 126);
}

// What one supervised run has seen so far.
struct Run {
  pid_t pgid = 0;  // our pid: the group was made ours, then left to the child
  pid_t child = 0;
  pid_t parent = 0;
  bool child_done = false;
  int status = 0;
  double timeout_at = -1;  // monotonic seconds; -1: none
  double kill_at = -1;     // when the group gets SIGKILL
  double give_up_at = -1;  // members that outlive SIGKILL this long are left
  bool timed_out = false;
  bool parent_gone = false;
};

// " STATE PPID PGRP" after the command name of /proc/PID/stat, as sscanf's
// " %c %ld %ld" reads it (without sscanf, which brings strtod: 50 KB)
bool read_state_and_group(const char* p, char& state, long& pgrp) {
  auto blanks = [&p] {
    while (*p == ' ') ++p;
  };
  auto number = [&p](long& v) {
    bool minus = *p == '-';
    p += minus;
    if (*p < '0' || *p > '9') return false;
    for (v = 0; *p >= '0' && *p <= '9'; ++p) v = v * 10 + (*p - '0');
    if (minus) v = -v;
    return true;
  };
  long ppid = 0;
  blanks();
  if (!*p) return false;
  state = *p++;
  blanks();
  if (!number(ppid)) return false;
  blanks();
  return number(pgrp);
}

// Linux: a member of pgid in /proc that is not a zombie (an init that never
// reaps would keep a dead group "existing" forever); true where /proc is not.
bool has_live_member(pid_t pgid) {
  DIR* dir = opendir("/proc");
  if (!dir) return true;
  bool live = false;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    char path[300], buf[512];
    std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE* f = std::fopen(path, "re");
    if (!f) continue;
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    const char* rest = std::strrchr(buf, ')');
    char state = 0;
    long pgrp = 0;
    if (rest && read_state_and_group(rest + 1, state, pgrp) && pgrp == pgid && state != 'Z' && state != 'X') {
      live = true;
      break;
    }
  }
  closedir(dir);
  return live;
}

bool group_exists(pid_t pgid) { return (kill(-pgid, 0) == 0 || errno == EPERM) && has_live_member(pgid); }

void signal_group(Run& r, int sig, double kill_after) {
  kill(-r.pgid, sig);
  if (r.kill_at < 0) r.kill_at = monotonic_seconds() + kill_after;
}

// Reap every child (ours, and on Linux the orphans we adopted as subreaper).
void reap(Run& r) {
  int st = 0;
  pid_t p;
  while ((p = waitpid(-1, &st, WNOHANG)) > 0) {
    if (p != r.child) continue;
    r.child_done = true;
    r.status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
  }
}

// One wait for a signal or the next deadline; acts on what it brings.
void step(Run& r, const GroupLimits& lim) {
  double now = monotonic_seconds(), wake = now + 1;  // getppid() looked at each second
  if (r.child_done) wake = now + 0.05;               // leftovers not reaped by us
  for (double t : {r.timeout_at, r.kill_at, r.give_up_at})
    if (t >= 0 && t < wake) wake = t;
  sigset_t set = watched_set();
  double wait = wake - now;
  if (wait < 0) wait = 0;
  timespec ts{static_cast<time_t>(wait),
              static_cast<long>((wait - static_cast<double>(static_cast<time_t>(wait))) * 1e9)};
  siginfo_t info{};
  int sig = sigtimedwait(&set, &info, &ts);
  if (sig > 0 && sig != SIGCHLD && info.si_pid != getpid()) signal_group(r, sig, lim.kill_after);
  now = monotonic_seconds();
  if (r.timeout_at >= 0 && now >= r.timeout_at) {
    r.timeout_at = -1;
    r.timed_out = true;
    signal_group(r, SIGTERM, lim.kill_after);
  }
  if (r.kill_at >= 0 && now >= r.kill_at) {
    r.kill_at = -1;
    kill(-r.pgid, SIGKILL);
    r.give_up_at = now + lim.kill_after;
  }
  if (!r.parent_gone && getppid() != r.parent) {
    r.parent_gone = true;
    signal_group(r, SIGTERM, lim.kill_after);
  }
}

// exec's errno from the child's close-on-exec pipe (EOF: it ran); returns pgid
pid_t read_exec_errno(Fd& rd, int& exec_errno, pid_t pgid) {
  int err = 0;
  ssize_t n;
  do n = read(rd.get(), &err, sizeof err);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) exec_errno = err;
  return pgid;
}

pid_t start_group(const std::vector<std::string>& argv, const sigset_t& original, int& exec_errno, pid_t& child) {
  const pid_t own_group = getpgrp();
  // A session leader cannot leave its group: the child makes its own then
  // (its pid the group's id), as no engine ever runs us that way.
  const bool session_leader = getsid(0) == getpid();
  if (!session_leader && setpgid(0, 0) != 0) fail_system(errno, "create", "process group");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) fail_system(errno, "create", "pipe");
  Fd rd(fds[0]), wr(fds[1]);
  pid_t pid = fork();
  if (pid < 0) fail_system(errno, "fork for", argv[0]);
  if (pid == 0) {
    if (session_leader) setpgid(0, 0);
    exec_in_group(argv, original, wr.get());
  }
  child = pid;
  if (session_leader) {
    (void)setpgid(pid, pid);  // whichever of the two runs first
    wr.reset();
    return read_exec_errno(rd, exec_errno, pid);
  }
  // Back to the caller's group: the agent's group (our pid as its id) is
  // then only the agent's, and a SIGKILL to it never reaches us. The id is
  // not reused while any member lives.
  (void)setpgid(0, own_group);
  wr.reset();
  return read_exec_errno(rd, exec_errno, getpid());
}
}  // namespace

GroupStatus run_group(const std::vector<std::string>& argv, const GroupLimits& limits, int& exec_errno) {
  Run r;
  r.parent = getppid();
  for (int s : termination_signals) signal(s, SIG_DFL);  // an ignored signal would never be read
  signal(SIGCHLD, SIG_DFL);
  sigset_t set = watched_set(), original;
  sigprocmask(SIG_BLOCK, &set, &original);
#if defined(__linux__)
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  if (getppid() != r.parent) r.parent_gone = true;  // died before the prctl
  exec_errno = 0;
  r.pgid = start_group(argv, original, exec_errno, r.child);
  if (limits.timeout > 0) r.timeout_at = monotonic_seconds() + limits.timeout;
  if (r.parent_gone) signal_group(r, SIGTERM, limits.kill_after);
  for (;;) {
    reap(r);
    if (r.child_done && !group_exists(r.pgid)) break;
    if (r.child_done && r.kill_at < 0 && r.give_up_at < 0) signal_group(r, SIGTERM, limits.kill_after);
    if (r.give_up_at >= 0 && monotonic_seconds() >= r.give_up_at && r.child_done) break;
    step(r, limits);
  }
  reap(r);  // the adopted members just ended: no zombie is left to an init that never reaps
  return {r.timed_out ? 124 : r.status, r.timed_out};
}

bool is_group_alive(pid_t pgid, std::optional<uint64_t> start) {
  if (pgid <= 1) return false;
  if (start) {
    // a process with that number, started at another time: the number was
    // free again, so no group of ours has it
    auto now = process_start_time(pgid);
    if (now && *now != *start) return false;
  }
  return group_exists(pgid);
}

bool end_group(pid_t pgid, std::optional<uint64_t> start, double kill_after) {
  if (!is_group_alive(pgid, start)) return true;
  kill(-pgid, SIGTERM);
  double end = monotonic_seconds() + kill_after;
  while (monotonic_seconds() < end) {
    if (!group_exists(pgid)) return true;
    sleep_seconds(0.05);
  }
  kill(-pgid, SIGKILL);
  end = monotonic_seconds() + kill_after;
  while (monotonic_seconds() < end) {
    if (!group_exists(pgid)) return true;
    sleep_seconds(0.05);
  }
  return !group_exists(pgid);
}

}  // namespace loopkit
