#include "sys/proc/spawn.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"

namespace loopkit {

namespace {
// Termination signals ignored when we started (nohup, a shell's background
// job) stay ignored: neither held nor passed on, as a shell would do.
bool is_ignored(int sig) {
  struct sigaction sa;
  return sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

sigset_t held_set(bool with_child) {
  static const bool ignored[3] = {is_ignored(SIGINT), is_ignored(SIGTERM), is_ignored(SIGHUP)};
  sigset_t set;
  sigemptyset(&set);
  int i = 0;
  for (int s : {SIGINT, SIGTERM, SIGHUP})
    if (!ignored[i++]) sigaddset(&set, s);
  if (with_child) sigaddset(&set, SIGCHLD);
  return set;
}

timespec to_timespec(double seconds) {
  if (seconds < 0) seconds = 0;
  timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  return ts;
}

// the signal mask and dispositions of the shell that started us
sigset_t g_original_mask;
}  // namespace

HeldSignals::HeldSignals() {
  sigset_t set = held_set(true);
  sigprocmask(SIG_BLOCK, &set, &g_original_mask);
  // an inherited SIG_IGN for SIGCHLD would reap children behind our back
  signal(SIGCHLD, SIG_DFL);
}

int HeldSignals::pause(double seconds) {
  sigset_t set = held_set(false);
  double end = monotonic_seconds() + seconds;
  for (;;) {
    timespec ts = to_timespec(end - monotonic_seconds());
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &ts);
    if (sig > 0) return received_ = sig;
    if (errno == EAGAIN) return 0;
    if (errno != EINTR) fail_system(errno, "wait for", "signals");
  }
}

// posix_spawnp shares our memory with the child until it execs (no page
// tables copied, as fork would) and reports exec's error itself. Only for
// a file without "#!" does glibc's posix_spawnp not fall back to sh as
// execvp does: that case is run by fork and execvp, as before.
static pid_t spawn_command(const std::vector<std::string>& argv, int& exec_errno) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setsigmask(&attr, &g_original_mask);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  int err = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (err == 0) return pid;
  if (err == EAGAIN) fail_system(err, "fork for", argv[0]);
  if (err != ENOEXEC) {
    exec_errno = err;
    return -1;
  }
  // exec reports its failure through a close-on-exec pipe: EOF means it ran
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) fail_system(errno, "create", "pipe");
  Fd rd(fds[0]), wr(fds[1]);
  pid = fork();
  if (pid < 0) fail_system(errno, "fork for", argv[0]);
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &g_original_mask, nullptr);
    execvp(args[0], args.data());
    int e = errno;
    (void)!write(wr.get(), &e, sizeof e);
    _exit(e == ENOENT ? 127 : 126);
  }
  wr.reset();
  ssize_t n;
  do n = read(rd.get(), &err, sizeof err);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    exec_errno = err;
    return -1;
  }
  return pid;
}

ChildStatus run_child(const std::vector<std::string>& argv, double tick_seconds, const std::function<void()>& on_tick) {
  ChildStatus result;
  pid_t pid = spawn_command(argv, result.exec_errno);
  if (pid < 0) {
    result.status = result.exec_errno == ENOENT ? 127 : 126;
    return result;
  }
  sigset_t set = held_set(true);
  double next_tick = monotonic_seconds() + tick_seconds;
  for (;;) {
    timespec ts = to_timespec(next_tick - monotonic_seconds());
    siginfo_t info;
    int sig = sigtimedwait(&set, &info, &ts);
    if (sig == SIGCHLD || sig < 0) {
      if (sig < 0 && errno == EAGAIN) {
        on_tick();
        next_tick = monotonic_seconds() + tick_seconds;
      }
      int status;
      pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        result.status = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
        break;
      }
      if (done < 0 && errno != EINTR) fail_system(errno, "wait for", argv[0]);
    } else if (sig > 0 && info.si_code != SI_KERNEL) {
      kill(pid, sig);
    }
  }
  return result;
}

}  // namespace loopkit

namespace loopkit {

void terminate_child() { kill(getpid(), SIGTERM); }

void start_detached(const std::function<void()>& body) {
  pid_t middle = fork();
  if (middle < 0) fail_system(errno, "fork", "a background process");
  if (middle == 0) {
    setsid();
    pid_t grandchild = fork();
    if (grandchild != 0) _exit(grandchild < 0 ? 1 : 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
    }
    close_range(3, ~0U, 0);
    try {
      body();
    } catch (...) {
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail_system(EAGAIN, "fork", "a background process");
}

void exec_replacing(const std::string& path, char* const* argv) {
  execv(path.c_str(), argv);
  fail_system(errno, "run", path);
}

std::string self_folder() {
  std::string exe(4096, '\0');
  ssize_t n = readlink("/proc/self/exe", exe.data(), exe.size());
  if (n <= 0 || static_cast<std::size_t>(n) >= exe.size())
    fail_system(n < 0 ? errno : ENAMETOOLONG, "read", "/proc/self/exe");
  exe.resize(static_cast<std::size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

}  // namespace loopkit
