#include "sys/proc/supervise.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
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
#include "sys/proc/shared_child.hpp"
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

// What the group's first member is started with: a copy in its own stack
// area (sys/proc/shared_child.hpp), exec_errno written back for us.
struct AgentStart {
  char* const* argv;
  sigset_t mask;          // the signal mask we were started with
  int out[2] = {-1, -1};  // its stdout and stderr (--output), else ours
  bool own_group = false;
  bool stdin_null = false;
  int report = -1;     // a pipe for exec_errno, where the child does not share our memory
  int exec_errno = 0;  // why exec failed (0: it ran)
};

// The child: the group's first member, its signals as a foreground command
// has them (a shell's background job starts with SIGINT and SIGQUIT ignored).
// It runs in our memory until it execs: nothing here allocates, and errno
// is ours to write (we wait, CLONE_VFORK; the sentinel writes none).
int exec_in_group(void* arg) {
  auto& a = *static_cast<AgentStart*>(arg);
  for (int s : {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) signal(s, SIG_DFL);
  if (a.own_group) setpgid(0, 0);
  // A background group that reads its terminal is stopped (SIGTTIN) and
  // would hang the engine unseen: a terminal on stdin becomes /dev/null.
  if (a.stdin_null) {
    int null = open("/dev/null", O_RDONLY);
    if (null > 0) {
      dup2(null, 0);
      close(null);
    }
  }
  if (a.out[0] >= 0) {  // close-on-exec both, the copies on 1 and 2 not
    dup2(a.out[0], 1);
    dup2(a.out[1], 2);
  }
  sigprocmask(SIG_SETMASK, &a.mask, nullptr);
  execvp(a.argv[0], a.argv);
  a.exec_errno = errno;
  if (a.report >= 0) (void)!write(a.report, &a.exec_errno, sizeof a.exec_errno);
  // returned, not _exit: a noreturn call makes AddressSanitizer check this
  // stack against the thread's, and warn
  return a.exec_errno == ENOENT ? 127 : 126;
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

// /proc/NAME/stat (dir: /proc) names a live (not zombie) member of pgid
bool is_live_member(int dir, const char* name, pid_t pgid) {
  char path[32], buf[512];
  size_t len = std::strlen(name);
  if (len + sizeof "/stat" > sizeof path) return false;
  std::memcpy(path, name, len);
  std::memcpy(path + len, "/stat", sizeof "/stat");
  int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  const char* rest = std::strrchr(buf, ')');
  char state = 0;
  long pgrp = 0;
  return rest && read_state_and_group(rest + 1, state, pgrp) && pgrp == pgid && state != 'Z' && state != 'X';
}

// Linux: a member of pgid in /proc that is not a zombie (an init that never
// reaps would keep a dead group "existing" forever); true where /proc is not.
// Nothing allocated (no opendir, no stdio): the sentinel runs it in memory
// shared with a parent that may have died inside malloc.
bool has_live_member(pid_t pgid) {
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return true;
  alignas(dirent64) char ents[4096];
  bool live = false;
  ssize_t n;
  while (!live && (n = getdents64(dir, ents, sizeof ents)) > 0) {
    for (ssize_t at = 0; at < n && !live;) {
      const auto* e = reinterpret_cast<const dirent64*>(ents + at);
      at += e->d_reclen;
      if (e->d_name[0] >= '1' && e->d_name[0] <= '9') live = is_live_member(dir, e->d_name, pgid);
    }
  }
  close(dir);
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

// The group's first member started (in our memory until it execs: no fork
// of our page tables); returns the group's id.
pid_t start_group(const std::vector<std::string>& argv, const sigset_t& original, int& exec_errno, pid_t& child,
                  const OutputPipes* out) {
  const pid_t own_group = getpgrp();
  // A session leader cannot leave its group: the child makes its own then
  // (its pid the group's id), as no engine ever runs us that way.
  const bool session_leader = getsid(0) == getpid();
  if (!session_leader && setpgid(0, 0) != 0) fail_system(errno, "create", "process group");
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  AgentStart start{args.data(), original};
  if (out) std::copy(std::begin(out->write), std::end(out->write), start.out);
  start.own_group = session_leader;
  start.stdin_null = isatty(0);
  // valgrind makes the child a fork: its exec's errno comes through a
  // close-on-exec pipe then, and its end is waited for there
  int report[2] = {-1, -1};
  if (!may_share_memory_long() && pipe2(report, O_CLOEXEC) != 0) fail_system(errno, "create", "pipe");
  start.report = report[1];
  // execvp's PATH buffer and a script's argv for sh are on the stack
  SharedChild c =
      start_shared_child(exec_in_group, &start, sizeof start, (64 << 10) + args.size() * sizeof(char*), true);
  if (c.pid < 0) fail_system(errno, "fork for", argv[0]);
  exec_errno = static_cast<AgentStart*>(c.arg)->exec_errno;  // it has exec'd or exited: CLONE_VFORK
  if (report[0] >= 0) {
    close(report[1]);
    while (read(report[0], &exec_errno, sizeof exec_errno) < 0 && errno == EINTR) {
    }
    close(report[0]);
  }
  free_shared_child(c);
  child = c.pid;
  if (out)
    for (int fd : out->write) close(fd);
  if (session_leader) return c.pid;  // its setpgid came before its exec, which we waited for
  // Back to the caller's group: the agent's group (our pid as its id) is
  // then only the agent's, and a SIGKILL to it never reaches us. The id is
  // not reused while any member lives.
  (void)setpgid(0, own_group);
  return getpid();
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

// Every descriptor closed but keep (-1: none), 0-2 included. Where the
// kernel has close_range, no call here fails (none writes errno).
void close_all_but(std::array<int, 4> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned from = 0;
  for (int k : keep) {
    if (k < 0 || static_cast<unsigned>(k) < from) continue;  // none, or twice
    if (static_cast<unsigned>(k) > from) close_range_of(from, static_cast<unsigned>(k) - 1);
    from = static_cast<unsigned>(k) + 1;
  }
  close_range_of(from, ~0U);
}

// The sentinel may run in our memory: close_range(2) there (it closes
// descriptors without a failing call, which would write errno, ours too)
// and no valgrind
bool sentinel_may_share_memory() {
#if defined(SYS_close_range)
  return syscall(SYS_close_range, ~0U, ~0U, 0) == 0 && may_share_memory_long();
#else
  return false;
#endif
}

// The sentinel: a child in a group of its own that waits on a pipe from
// us. A byte on it is our normal end; the pipe closing without one means
// we died (kill -9, of us or of our group): it ends the agent's group and
// exits. It keeps the hold file open until then, and the read ends of the
// output pipes: an agent that writes while it is being ended (a shell's
// "Terminated") fills their buffers instead of dying of SIGPIPE before its
// SIGTERM handler ran. It keeps our signal mask: the termination and job
// signals stay blocked, never delivered. It runs in our memory
// (sys/proc/shared_child.hpp): end_group allocates nothing, and no call
// before it fails while we live (then errno is no one else's).
struct SentinelStart {
  int pipe;
  std::array<int, 4> keep;
  pid_t pgid;
  std::optional<uint64_t> start;
  double kill_after;
};

int run_sentinel(void* arg) {
  const auto& a = *static_cast<const SentinelStart*>(arg);
  setpgid(0, 0);
  close_all_but(a.keep);
  char byte = 0;
  ssize_t n;
  do n = read(a.pipe, &byte, 1);
  while (n < 0 && errno == EINTR);
  if (n != 1) end_group(a.pgid, a.start, a.kill_after);
  return 0;
}

struct Sentinel {
  SharedChild child;
  int wr = -1;
};

Sentinel start_sentinel(pid_t pgid, std::optional<uint64_t> start, const GroupLimits& lim, int hold_fd,
                        const OutputPipes& out) {
  Sentinel s;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) fail_system(errno, "create", "pipe");
  SentinelStart a{fds[0], {fds[0], hold_fd, out.read[0], out.read[1]}, pgid, start, lim.kill_after};
  if (sentinel_may_share_memory()) {
    s.child = start_shared_child(run_sentinel, &a, sizeof a, 64 << 10, false);
  } else if ((s.child.pid = fork()) == 0) {
    _exit(run_sentinel(&a));
  }
  if (s.child.pid < 0) fail_system(errno, "fork for", "the sentinel");
  (void)setpgid(s.child.pid, s.child.pid);  // whichever of the two runs first
  close(fds[0]);
  s.wr = fds[1];
  return s;
}

void stop_sentinel(Sentinel& s) {
  if (s.child.pid < 0) return;
  (void)!write(s.wr, "x", 1);
  close(s.wr);
  while (waitpid(s.child.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  free_shared_child(s.child);
  s.child.pid = -1;
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
  std::optional<uint64_t> group_start;  // the group leader's: read once, for the sentinel and the hold
  if (!leader) sentinel = start_sentinel(getpid(), group_start = process_start_time(getpid()), limits, hold, pipes);
  r.pgid = start_group(argv, original, exec_errno, r.child, limits.output ? &pipes : nullptr);
  if (leader) sentinel = start_sentinel(r.pgid, group_start = process_start_time(r.pgid), limits, hold, pipes);
  if (hold >= 0) write_hold_record(hold, {r.pgid, group_start, r.parent, process_start_time(r.parent)});
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
