#include "sys/proc.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <string_view>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sys/clock.hpp"
#include "sys/fd.hpp"

namespace loopkit {

namespace {
// The fields of /proc/PID/stat after the command name, which may hold
// spaces and ')' itself: they start after the last ')'. "" when unreadable.
std::string stat_fields(pid_t pid) {
  if (pid <= 0) return "";
  Fd fd = open_fd("/proc/" + std::to_string(pid) + "/stat", O_RDONLY);
  if (!fd) return "";
  char buf[1024];
  ssize_t n;
  do n = ::read(fd.get(), buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return "";
  std::string_view s(buf, static_cast<size_t>(n));
  auto close = s.rfind(')');
  if (close == std::string_view::npos) return "";
  return std::string(s.substr(close + 1));
}

// Field number `want` (3 or more) of a stat line, from what stat_fields gives.
std::string_view stat_field(std::string_view s, int want) {
  int field = 2;
  size_t i = 0;
  for (;;) {
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size()) return {};
    ++field;
    size_t end = s.find(' ', i);
    if (end == std::string_view::npos) end = s.size();
    if (field == want) return s.substr(i, end - i);
    i = end;
  }
}
}  // namespace

std::optional<char> process_state(pid_t pid) {
  std::string s = stat_fields(pid);
  std::string_view f = stat_field(s, 3);
  if (f.size() != 1) return std::nullopt;
  return f[0];
}

bool is_zombie(pid_t pid) {
  auto s = process_state(pid);
  return s && (*s == 'Z' || *s == 'X');
}

bool is_pid_alive(pid_t pid) {
  if (pid <= 0) return false;
  // EPERM: another user's process, alive
  if (kill(pid, 0) != 0 && errno != EPERM) return false;
  // A zombie still answers kill() until its parent reaps it, which a parent
  // that never waits makes forever; it holds nothing, so it is dead here.
  return !is_zombie(pid);
}

std::optional<uint64_t> process_start_time(pid_t pid) {
  std::string s = stat_fields(pid);
  std::string_view f = stat_field(s, 22);
  if (f.empty()) return std::nullopt;
  uint64_t v = 0;
  for (char c : f) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

bool is_same_process_alive(pid_t pid, std::optional<uint64_t> start) {
  if (!is_pid_alive(pid)) return false;
  if (!start) return true;
  auto now = process_start_time(pid);
  // no /proc entry but kill() says alive: another pid namespace; trust kill()
  return !now || *now == *start;
}

std::string boot_id() {
  Fd fd = open_fd("/proc/sys/kernel/random/boot_id", O_RDONLY);
  if (!fd) return "";
  char buf[64];
  ssize_t n = ::read(fd.get(), buf, sizeof buf);
  if (n <= 0) return "";
  std::string s(buf, static_cast<size_t>(n));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string host_name() {
  struct utsname u;
  if (uname(&u) != 0) return "";
  return u.nodename;
}

bool wait_for_exit(pid_t pid, double seconds) {
#ifdef SYS_pidfd_open
  int pfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pfd >= 0) {
    Fd guard(pfd);
    struct pollfd p {
      pfd, POLLIN, 0
    };
    // poll takes int milliseconds: a long wait is made of several
    double end = monotonic_seconds() + seconds;
    for (;;) {
      double left = end - monotonic_seconds();
      int ms = left <= 0 ? 0 : left > 1e6 ? 1000000000 : static_cast<int>(left * 1000);
      int rc = poll(&p, 1, ms);
      if (rc > 0 || !is_pid_alive(pid)) return true;
      if (rc < 0 || left <= 0 || ms < 1000000000) return false;  // a signal, or the time is up
    }
  }
  if (errno == ESRCH) return true;
#endif
  // no pidfd: look once a second
  double end = monotonic_seconds() + seconds;
  while (is_pid_alive(pid)) {
    double left = end - monotonic_seconds();
    if (left <= 0) return false;
    sleep_seconds(left < 1 ? left : 1);
  }
  return true;
}

}  // namespace loopkit
