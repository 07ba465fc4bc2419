#include "sys/spawn.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys/clock.hpp"
#include "sys/error.hpp"
#include "sys/fd.hpp"

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

ChildStatus run_child(const std::vector<std::string>& argv, double tick_seconds, const std::function<void()>& on_tick) {
  // exec reports its failure through a close-on-exec pipe: EOF means it ran
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) fail_system(errno, "create", "pipe");
  Fd rd(fds[0]), wr(fds[1]);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) fail_system(errno, "fork for", argv[0]);
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &g_original_mask, nullptr);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    int err = errno;
    (void)!write(wr.get(), &err, sizeof err);
    _exit(err == ENOENT ? 127 : 126);
  }
  wr.reset();

  ChildStatus result;
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
  ssize_t n;
  do n = read(rd.get(), &result.exec_errno, sizeof result.exec_errno);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof result.exec_errno)) result.exec_errno = 0;
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

}  // namespace loopkit
