#include "sys/proc/interrupt.hpp"

#include <cerrno>
#include <csignal>
#include <poll.h>
#include <unistd.h>

#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"

namespace loopkit {

namespace {
volatile sig_atomic_t g_signal = 0;
void on_signal(int sig) { g_signal = sig; }
std::string g_buffer;
bool g_eof = false;
}  // namespace

void catch_termination_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns so we can flush
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int termination_signal() { return g_signal; }

namespace {
void ignore_signal(int) {}
void catch_quietly(int sig) {
  struct sigaction sa {
  }, old{};
  sa.sa_handler = ignore_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(sig, &sa, &old) == 0 && old.sa_handler == SIG_IGN) sigaction(sig, &old, nullptr);
}
}  // namespace

void catch_file_size_limit() { catch_quietly(SIGXFSZ); }
void catch_broken_pipe() { catch_quietly(SIGPIPE); }

LineRead read_line(int fd, std::string& line, double seconds) {
  double deadline = seconds < 0 ? 0 : monotonic_seconds() + seconds;
  for (;;) {
    auto nl = g_buffer.find('\n');
    if (nl != std::string::npos) {
      line.assign(g_buffer, 0, nl);
      g_buffer.erase(0, nl + 1);
      return LineRead::line;
    }
    if (g_eof) {
      if (g_buffer.empty()) return LineRead::eof;
      line = std::move(g_buffer);
      g_buffer.clear();
      return LineRead::line;
    }
    // after a signal, lines already in the pipe are still taken, then we stop
    int ms = -1;
    if (g_signal) {
      ms = 0;
    } else if (seconds >= 0) {
      double left = deadline - monotonic_seconds();
      if (left <= 0) return LineRead::timeout;
      // poll takes int milliseconds: a long wait is made of several turns
      ms = left > 1e6 ? 1000000000 : static_cast<int>(left * 1000) + 1;
    }
    struct pollfd p {
      fd, POLLIN, 0
    };
    int rc = poll(&p, 1, ms);
    if (rc < 0) {
      if (errno == EINTR) continue;  // g_signal is looked at on the next turn
      fail_system(errno, "wait for", "standard input");
    }
    if (rc == 0) {
      if (g_signal) return LineRead::interrupted;
      continue;  // the deadline is checked above
    }
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail_system(errno, "read", "standard input");
    }
    if (n == 0) g_eof = true;
    else g_buffer.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace loopkit
