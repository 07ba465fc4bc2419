#include "sys/time/clock.hpp"
#include "sys/time/clock_wall.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string_view>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/base/format.hpp"
#include "sys/time/tz.hpp"

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
  if (!fd) fail_usage(loopkit::format("LOOPKIT_NOW: cannot read {}: {}", quoted(path), std::strerror(errno)));
  std::string text = read_up_to(fd.get(), 64, path);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  auto v = epoch_digits(text);
  if (!v)
    fail_usage(loopkit::format("LOOPKIT_NOW: {} holds no epoch seconds from 0 to {}: {}", quoted(path), max_epoch,
                               quoted(text)));
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
  if (!v) fail_usage(loopkit::format("LOOPKIT_NOW: not epoch seconds from 0 to {}: {}", max_epoch, quoted(s)));
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

namespace {
// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard
// Hinnant's civil_from_days): gmtime_r would first load the time zone
// (tzset reads /etc/localtime), twice the cost of the rest of a heartbeat.
void civil_from_days(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
}

// The day counted from 1970-01-01 of a proleptic Gregorian date (Hinnant's
// days_from_civil, civil_from_days' inverse): timegm would bring glibc's
// time zone code (sscanf and every strto* with it) into every tool.
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

char* two_digits(char* p, unsigned v) {
  *p++ = static_cast<char>('0' + v / 10);
  *p++ = static_cast<char>('0' + v % 10);
  return p;
}
}  // namespace

std::string iso8601_utc(int64_t epoch) {
  int64_t days = epoch / 86400, secs = epoch % 86400;
  if (secs < 0) secs += 86400, --days;
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  const auto s = static_cast<unsigned>(secs);
  if (y < 0 || y > 9999)
    return loopkit::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", y, m, d, s / 3600, s / 60 % 60, s % 60);
  char buf[20];
  char* p = two_digits(two_digits(buf, static_cast<unsigned>(y / 100)), static_cast<unsigned>(y % 100));
  *p++ = '-';
  p = two_digits(p, m);
  *p++ = '-';
  p = two_digits(p, d);
  *p++ = 'T';
  p = two_digits(p, s / 3600);
  *p++ = ':';
  p = two_digits(p, s / 60 % 60);
  *p++ = ':';
  p = two_digits(p, s % 60);
  *p++ = 'Z';
  return std::string(buf, p);
}

namespace {
// n digits at s[at], or -1
int digits_at(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return -1;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

bool is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in(int y, int m) {
  static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

// "Z", "+HH:MM", "+HHMM" or "+HH" (or '-'): seconds east of UTC, nullopt when
// it is none of them or out of range
std::optional<int> utc_offset(std::string_view z) {
  if (z == "Z" || z == "z") return 0;
  if (z.size() < 3 || (z[0] != '+' && z[0] != '-')) return std::nullopt;
  int h = digits_at(z, 1, 2), m = 0;
  if (z.size() == 6 && z[3] == ':') m = digits_at(z, 4, 2);
  else if (z.size() == 5) m = digits_at(z, 3, 2);
  else if (z.size() != 3) return std::nullopt;
  if (h < 0 || h > 23 || m < 0 || m > 59) return std::nullopt;
  return (h * 3600 + m * 60) * (z[0] == '-' ? -1 : 1);
}
}  // namespace

std::optional<int64_t> parse_iso8601(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS, every field checked against the calendar
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  int y = digits_at(s, 0, 4), mo = digits_at(s, 5, 2), d = digits_at(s, 8, 2);
  int h = digits_at(s, 11, 2), mi = digits_at(s, 14, 2), sec = digits_at(s, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > days_in(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 ||
      sec > 59)
    return std::nullopt;
  std::string_view rest = s.substr(19);
  if (!rest.empty() && rest[0] == '.') {  // fractions of a second are dropped
    size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    if (i == 1) return std::nullopt;
    rest.remove_prefix(i);
  }
  std::optional<int> offset = rest.empty() ? 0 : utc_offset(rest);  // no zone: UTC, as loopkit writes
  if (!offset) return std::nullopt;
  int64_t days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return days * 86400 + h * 3600 + mi * 60 + sec - *offset;
}

namespace {
// YYYY-MM-DD, a real day: itself, else nullopt
std::optional<std::string> day_as_written(std::string_view t) {
  if (t.size() != 10 || t[4] != '-' || t[7] != '-') return std::nullopt;
  int y = digits_at(t, 0, 4), m = digits_at(t, 5, 2), d = digits_at(t, 8, 2);
  if (y < 0 || m < 1 || m > 12 || d < 1 || d > days_in(y, m)) return std::nullopt;
  return std::string(t);
}

// an instant whose local day is a year 1 to 9999 whatever the zone
bool dated_instant(std::optional<int64_t> epoch) {
  constexpr int64_t year1 = -62135596800;  // 0001-01-01T00:00:00Z
  return epoch && *epoch >= year1 + 86400 && *epoch <= max_epoch - 86400;
}
}  // namespace

std::optional<std::string> parse_day(std::string_view text) {
  if (text.size() == 10) return day_as_written(text);  // the zone is not read for a day
  return parse_day(text, TimeZone::of_process());
}

std::optional<std::string> parse_day(std::string_view text, const TimeZone& zone) {
  if (text.size() == 10) return day_as_written(text);
  std::optional<int64_t> epoch = parse_iso8601(text);
  if (!dated_instant(epoch)) return std::nullopt;
  return local_date(*epoch, zone);
}

std::string local_date(int64_t epoch) { return local_date(epoch, TimeZone::of_process()); }

// localtime_r would bring glibc's time zone code (its TZ parser: sscanf,
// every strto* and float128 math, 100 KB) into progress-append
std::string local_date(int64_t epoch, const TimeZone& zone) {
  int64_t local = epoch + zone.offset_at(epoch);
  int64_t days = local / 86400 - (local % 86400 < 0);
  int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  return loopkit::format("{:04}-{:02}-{:02}", y, m, d);
}

double monotonic_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double wall_seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
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
