#include "sys/clock.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <fmt/format.h>
#include <string_view>

#include "sys/error.hpp"
#include "sys/fd.hpp"

namespace loopkit {

namespace {
// Epoch seconds written as plain digits, in the range that ISO 8601 years
// 0000-9999 can show: a sign, a fraction or a value past
// 9999-12-31T23:59:59Z would be written as nonsense.
std::optional<int64_t> epoch_digits(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > max_epoch) return std::nullopt;
  return v;
}

// LOOPKIT_NOW=@FILE: the time is what FILE holds now (a trailing newline
// allowed), so that a test moves a running tool's clock by rewriting FILE.
int64_t clock_file_time(std::string_view path) {
  Fd fd = open_fd(std::string(path), O_RDONLY | O_CLOEXEC);
  if (!fd) fail_usage(fmt::format("LOOPKIT_NOW: cannot read {}: {}", quoted(path), std::strerror(errno)));
  std::string text = read_up_to(fd.get(), 64, path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  auto v = epoch_digits(text);
  if (!v)
    fail_usage(
        fmt::format("LOOPKIT_NOW: {} holds no epoch seconds from 0 to {}: {}", quoted(path), max_epoch, quoted(text)));
  return *v;
}

// LOOPKIT_NOW when set and not empty (an empty value means unset, as for
// TMPDIR): read at each call, never kept, so that a file clock can move.
std::optional<int64_t> clock_override() {
  const char* env = std::getenv("LOOPKIT_NOW");
  if (!env || !*env) return std::nullopt;
  std::string_view s(env);
  if (s[0] == '@' && s.size() > 1) return clock_file_time(s.substr(1));
  auto v = epoch_digits(s);
  if (!v) fail_usage(fmt::format("LOOPKIT_NOW: not epoch seconds from 0 to {}: {}", max_epoch, quoted(s)));
  return v;
}

// time(2) reads the kernel's coarse clock, which can lag a tick behind the
// CLOCK_REALTIME that date(1) shows: a script that saw `date +%s` pass a second
// could still be stamped with the one before. Read the same clock as date.
int64_t realtime_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec);
}
}  // namespace

void check_clock_override() { (void)clock_override(); }

int64_t now_epoch() {
  static const int64_t now = current_epoch();
  return now;
}

int64_t current_epoch() {
  if (auto v = clock_override()) return *v;
  return realtime_seconds();
}

int64_t age_between(int64_t now, int64_t then) {
  int64_t age;
  if (!__builtin_sub_overflow(now, then, &age)) return age;
  return then < 0 ? INT64_MAX : -INT64_MAX;  // so that -age never overflows either
}

std::string iso8601_utc(int64_t epoch) {
  time_t t = static_cast<time_t>(epoch);
  struct tm tm;
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

std::optional<int64_t> parse_iso8601(std::string_view s) {
  int y, mo, d, h = 0, mi = 0, sec = 0;
  std::string str(s);
  int n = 0;
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) return std::nullopt;
  std::string_view rest = s.substr(static_cast<size_t>(n));
  if (!rest.empty() && rest[0] == '.') {  // fractions of a second are dropped
    size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    rest.remove_prefix(i);
  }
  int offset = 0;
  if (rest == "Z" || rest == "z" || rest.empty()) {
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int oh = (rest[1] - '0') * 10 + (rest[2] - '0'), om = (rest[4] - '0') * 10 + (rest[5] - '0');
    offset = (oh * 3600 + om * 60) * (rest[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  struct tm tm {};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = sec;
  return static_cast<int64_t>(timegm(&tm)) - offset;
}

std::string local_date(int64_t epoch) {
  time_t t = static_cast<time_t>(epoch);
  struct tm tm;
  localtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

double monotonic_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

void sleep_seconds(double seconds) {
  if (seconds <= 0) return;
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  ts.tv_nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  nanosleep(&ts, nullptr);
}

}  // namespace loopkit
