#include "sys/proc/proc.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string_view>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "sys/time/clock.hpp"
#include "sys/base/fd.hpp"

namespace loopkit {

namespace {
// What one read of /proc/PID/stat says: its state (field 3) and start time
// (field 22). Both from one read, so that a liveness check that wants both
// opens the file once.
struct StatLine {
  std::optional<char> state;
  std::optional<uint64_t> start;
};

// Fields 3 (the state) and 22 (the start time) of what follows the
// command name: fields are separated by single spaces, counted a word of 8
// bytes at a time (a look at a process is in every lock call).
void stat_fields(std::string_view s, std::string_view& state, std::string_view& start) {
  const char* p = s.data();
  const char* const end = p + s.size();
  while (p < end && *p == ' ') ++p;
  const char* f = p;  // field 3
  while (p < end && *p != ' ') ++p;
  state = std::string_view(f, static_cast<size_t>(p - f));
  // the 19th space from here starts field 22
  int spaces = 0;
  constexpr uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  for (; p + 8 <= end; p += 8) {
    uint64_t w;
    std::memcpy(&w, p, sizeof w);
    w ^= ones * ' ';
    // a high bit in each byte that was a space (exact: no borrow crosses
    // bytes when each byte's low seven bits are added to 0x7f)
    const uint64_t hits = ~(((w & ~highs) + ~highs) | w) & highs;
    const int n = __builtin_popcountll(hits);
    if (spaces + n >= 19) break;
    spaces += n;
  }
  for (; p < end; ++p) {
    if (*p != ' ' || ++spaces < 19) continue;
    f = ++p;
    while (p < end && *p != ' ' && *p != '\n') ++p;
    start = std::string_view(f, static_cast<size_t>(p - f));
    return;
  }
}

// "/proc/PID/stat" without a std::string on the way
const char* stat_path(pid_t pid, char (&buf)[32]) {
  char digits[16];
  int n = 0;
  for (auto v = static_cast<unsigned>(pid); v > 0 || n == 0; v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  char* p = std::copy_n("/proc/", 6, buf);
  while (n > 0) *p++ = digits[--n];
  std::copy_n("/stat", 6, p);  // with its NUL
  return buf;
}

// The command name may hold spaces and ')' itself: the fields start after
// the last ')'. Nothing known when unreadable.
StatLine read_stat(pid_t pid) {
  StatLine r;
  if (pid <= 0) return r;
  char path[32];
  int fd;
  do fd = ::open(stat_path(pid, path), O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return r;
  Fd guard(fd);
  char buf[1024];
  ssize_t n;
  do n = ::read(fd, buf, sizeof buf - 1);
  while (n < 0 && errno == EINTR);
  if (n <= 0) return r;
  const void* close = memrchr(buf, ')', static_cast<size_t>(n));
  if (!close) return r;
  const char* after = static_cast<const char*>(close) + 1;
  std::string_view s(after, static_cast<size_t>(buf + n - after));
  std::string_view state, f;
  stat_fields(s, state, f);
  if (state.size() == 1) r.state = state[0];
  if (f.empty()) return r;
  uint64_t v = 0;
  for (char c : f) {
    if (c < '0' || c > '9') return r;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  r.start = v;
  return r;
}

bool is_zombie_state(const StatLine& s) { return s.state && (*s.state == 'Z' || *s.state == 'X'); }

// kill(pid, 0) says it exists (EPERM: another user's process, alive)
bool exists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }
}  // namespace

std::optional<char> process_state(pid_t pid) { return read_stat(pid).state; }

bool is_zombie(pid_t pid) { return is_zombie_state(read_stat(pid)); }

bool is_pid_alive(pid_t pid) {
  // A zombie still answers kill() until its parent reaps it, which a parent
  // that never waits makes forever; it holds nothing, so it is dead here.
  return look_at_process(pid).alive;
}

std::optional<uint64_t> process_start_time(pid_t pid) { return read_stat(pid).start; }

// /proc/PID/stat first: read, it answers alive, zombie and start time at
// once; kill() only where /proc has no entry for a pid that may still be
// there (another pid namespace's /proc, or none mounted).
ProcessLook look_at_process(pid_t pid) {
  if (pid <= 0) return {};
  StatLine s = read_stat(pid);
  if (s.state) return is_zombie_state(s) ? ProcessLook{false, std::nullopt, true} : ProcessLook{true, s.start};
  if (!exists(pid)) return {};
  return {true, std::nullopt};
}

bool is_same_process_alive(pid_t pid, std::optional<uint64_t> start) {
  ProcessLook now = look_at_process(pid);
  if (!now.alive) return false;
  // no /proc entry but kill() says alive: another pid namespace; trust kill()
  return !start || !now.start || *now.start == *start;
}

uid_t effective_uid() {
  static const uid_t euid = [] {
    errno = 0;
    const unsigned long v = getauxval(AT_EUID);
    return errno == 0 ? static_cast<uid_t>(v) : geteuid();
  }();
  return euid;
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
