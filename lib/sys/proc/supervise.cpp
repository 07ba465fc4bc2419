#include "sys/proc/supervise.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <utility>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/proc/proc.hpp"
#include "sys/proc/supervise_hold.hpp"

namespace loopkit {

namespace {
constexpr int termination_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
// job control: passed on to the group as a foreground pipeline gets them
constexpr int job_signals[] = {SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT};

sigset_t watched_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : termination_signals) sigaddset(&set, s);
  for (int s : job_signals) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

// The child: the group's first member, its signals as a foreground command
// has them (a shell's background job starts with SIGINT and SIGQUIT ignored).
[[noreturn]] void exec_in_group(const std::vector<std::string>& argv, const sigset_t& mask, int report_fd,
                                const OutputPipes* out) {
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) signal(s, SIG_DFL);
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
  if (out) {  // close-on-exec both, the copies on 1 and 2 not
    dup2(out->write[0], 1);
    dup2(out->write[1], 2);
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
  OutputCopy* copy = nullptr;  // the command's output, while a pipe of it is open
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
  if (r.copy && r.copy->open()) {
    // the output copied meanwhile; signals looked at every 0.1 s at least
    const double until = now + (wait < 0.1 ? wait : 0.1);
    while (r.copy->pump(until - monotonic_seconds()) && monotonic_seconds() < until) {
    }
    ts = {0, 0};
  }
  int sig = sigtimedwait(&set, &info, &ts);
  if (sig == SIGCONT) {
    kill(-r.pgid, SIGCONT);
  } else if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
    kill(-r.pgid, sig);  // the group stops, then so do we, as a whole job does
    raise(SIGSTOP);
  } else if (sig > 0 && sig != SIGCHLD && info.si_pid != getpid()) {
    signal_group(r, sig, lim.kill_after);
  }
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

pid_t start_group(const std::vector<std::string>& argv, const sigset_t& original, int& exec_errno, pid_t& child,
                  const OutputPipes* out) {
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
    exec_in_group(argv, original, wr.get(), out);
  }
  child = pid;
  if (out)
    for (int fd : out->write) close(fd);
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
// Descriptors from..to closed (close_range(2); one by one where the kernel
// has none, up to the open-files limit).
void close_range_of(unsigned from, unsigned to) {
#if defined(SYS_close_range)
  if (syscall(SYS_close_range, from, to, 0) == 0) return;
#endif
  long max = sysconf(_SC_OPEN_MAX);
  if (max < 0 || max > 65536) max = 65536;
  for (unsigned fd = from; fd <= to && fd < static_cast<unsigned>(max); ++fd) close(static_cast<int>(fd));
}

// Every descriptor of ours closed but keep (-1: none; and 0-2, onto /dev/null).
void close_all_but(std::array<int, 4> keep) {
  int null = open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3 && null >= 0; ++fd)
    if (fd != null) dup2(null, fd);
  if (null > 2) close(null);
  std::sort(keep.begin(), keep.end());
  unsigned from = 3;
  for (int k : keep) {
    if (k < 0 || static_cast<unsigned>(k) < from) continue;  // none, among 0-2, or twice
    if (static_cast<unsigned>(k) > from) close_range_of(from, static_cast<unsigned>(k) - 1);
    from = static_cast<unsigned>(k) + 1;
  }
  close_range_of(from, ~0U);
}

// The sentinel: a child in a group of its own that waits on a pipe from
// us. A byte on it is our normal end; the pipe closing without one means
// we died (kill -9, of us or of our group): it ends the agent's group and
// exits. It keeps the hold file open until then, and the read ends of the
// output pipes: an agent that writes while it is being ended (a shell's
// "Terminated") fills their buffers instead of dying of SIGPIPE before its
// SIGTERM handler ran.
struct Sentinel {
  pid_t pid = -1;
  int wr = -1;
};

Sentinel start_sentinel(pid_t pgid, const GroupLimits& lim, int hold_fd, const OutputPipes& out) {
  Sentinel s;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) fail_system(errno, "create", "pipe");
  std::optional<uint64_t> start = process_start_time(pgid);
  pid_t pid = fork();
  if (pid < 0) fail_system(errno, "fork for", "the sentinel");
  if (pid == 0) {
    setpgid(0, 0);
    for (int sig : termination_signals) signal(sig, SIG_IGN);
    for (int sig : {SIGTSTP, SIGTTIN, SIGTTOU}) signal(sig, SIG_IGN);
    close_all_but({fds[0], hold_fd, out.read[0], out.read[1]});
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    char byte = 0;
    ssize_t n;
    do n = read(fds[0], &byte, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) end_group(pgid, start, lim.kill_after);
    _exit(0);
  }
  close(fds[0]);
  s.pid = pid;
  s.wr = fds[1];
  return s;
}

void stop_sentinel(Sentinel& s) {
  if (s.pid < 0) return;
  (void)!write(s.wr, "x", 1);
  close(s.wr);
  while (waitpid(s.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  s.pid = -1;
}

// The hold taken (waiting, as a termination signal or our parent's death
// may end the wait); its descriptor, or minus the status to exit with.
int take_group_hold(const GroupLimits& lim, pid_t parent) {
  if (lim.hold.empty()) return -1;
  sigset_t set = watched_set();
  return take_hold(lim.hold, [&] {
    timespec ts{0, 100000000};
    siginfo_t info{};
    int sig = sigtimedwait(&set, &info, &ts);
    for (int t : termination_signals)
      if (sig == t) return 128 + sig;
    return getppid() != parent ? 128 + SIGTERM : 0;
  });
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
  int hold = take_group_hold(limits, r.parent);
  if (hold < -1) return {-hold, false};
  // the group's id is ours unless we lead a session (start_group)
  const bool leader = getsid(0) == getpid();
  Sentinel sentinel;
  OutputPipes pipes;
  std::optional<OutputCopy> copy;
  if (limits.output) {
    if (!open_output_pipes(pipes)) fail_system(errno, "create", "pipe");
    signal(SIGPIPE, SIG_IGN);  // a reader of ours gone ends that copy, not us
    copy.emplace(pipes, *limits.output);
    r.copy = &*copy;
  }
  if (!leader) sentinel = start_sentinel(getpid(), limits, hold, pipes);
  r.pgid = start_group(argv, original, exec_errno, r.child, limits.output ? &pipes : nullptr);
  if (leader) sentinel = start_sentinel(r.pgid, limits, hold, pipes);
  if (hold >= 0) write_hold_record(hold, {r.pgid, process_start_time(r.pgid), r.parent, process_start_time(r.parent)});
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
  if (copy) copy->drain(1);
  stop_sentinel(sentinel);
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
  kill(-pgid, SIGCONT);  // a stopped group acts on it
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

bool end_hold(const std::string& path, double kill_after) {
  if (!is_hold_taken(path)) return true;
  if (auto r = read_hold_record(path)) end_group(r->pgid, r->pgid_start, kill_after);
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return !is_hold_taken(path);
  // members that left the group (setsid) still holding the file
  double give_up = monotonic_seconds() + kill_after + 1;
  while (is_hold_taken(path)) {
    if (monotonic_seconds() >= give_up) return false;
    kill_hold_holders(st.st_dev, st.st_ino);
    sleep_seconds(0.05);
  }
  return true;
}

}  // namespace loopkit
