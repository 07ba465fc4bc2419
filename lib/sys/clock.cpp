#include "sys/clock.hpp"

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <fmt/format.h>

#include "sys/error.hpp"

namespace loopkit {

namespace {
// LOOPKIT_NOW when set and not empty (an empty value means unset, as for
// TMPDIR). Only plain digits in the range that ISO 8601 years 0000-9999 can
// show are taken: a sign, a fraction or a value past 9999-12-31T23:59:59Z
// would be written as nonsense, so it is a usage error instead.
std::optional<int64_t> clock_override() {
  const char* env = std::getenv("LOOPKIT_NOW");
  if (!env || !*env) return std::nullopt;
  std::string_view s(env);
  int64_t v = 0;
  bool ok = s.size() <= 12;
  for (char c : s) {
    if (!ok || c < '0' || c > '9') {
      ok = false;
      break;
    }
    v = v * 10 + (c - '0');
  }
  if (!ok || v > max_epoch)
    fail_usage(fmt::format("LOOPKIT_NOW: not epoch seconds from 0 to {}: {}", max_epoch, quoted(s)));
  return v;
}
}  // namespace

void check_clock_override() { (void)clock_override(); }

namespace {
// time(2) reads the kernel's coarse clock, which can lag a tick behind the
// CLOCK_REALTIME that date(1) shows: a script that saw `date +%s` pass a second
// could still be stamped with the one before. Read the same clock as date.
int64_t realtime_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec);
}
}  // namespace

int64_t now_epoch() {
  static const int64_t now = [] {
    if (auto v = clock_override()) return *v;
    return realtime_seconds();
  }();
  return now;
}

int64_t current_epoch() {
  static const bool faked = [] {
    const char* env = std::getenv("LOOPKIT_NOW");
    return env && *env;
  }();
  return faked ? now_epoch() : realtime_seconds();
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
