#include "sys/proc.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sys/clock.hpp"
#include "sys/fd.hpp"

namespace loopkit {

bool is_pid_alive(pid_t pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) == 0) return true;
  return errno == EPERM;
}

std::optional<uint64_t> process_start_time(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  Fd fd = open_fd("/proc/" + std::to_string(pid) + "/stat", O_RDONLY);
  if (!fd) return std::nullopt;
  char buf[1024];
  ssize_t n = ::read(fd.get(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  std::string_view s(buf, static_cast<size_t>(n));
  // the command name (field 2) may hold spaces and ')': skip to the last ')'
  auto close = s.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  s.remove_prefix(close + 1);
  // s now starts at field 3; field 22 is the 20th from here
  int field = 2;
  size_t i = 0;
  while (i < s.size() && field < 22) {
    while (i < s.size() && s[i] == ' ') ++i;
    ++field;
    if (field == 22) break;
    while (i < s.size() && s[i] != ' ') ++i;
  }
  uint64_t v = 0;
  bool any = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    any = true;
  }
  if (!any) return std::nullopt;
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
    struct pollfd p{pfd, POLLIN, 0};
    int ms = seconds <= 0 ? 0 : static_cast<int>(seconds * 1000);
    int rc = poll(&p, 1, ms);
    return rc > 0 || !is_pid_alive(pid);
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
