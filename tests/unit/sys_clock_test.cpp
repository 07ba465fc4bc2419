// parse_iso8601: every date a tool reads (lock records' times) is checked
// against the calendar, and an offset is taken off to give UTC.
#include <catch2/catch.hpp>
#include <cstdio>
#include <ctime>
#include <vector>

#include "sys/time/clock.hpp"
#include "sys/time/tz.hpp"

using namespace loopkit;

TEST_CASE("issue 25: dates are calendar-checked: no February 31st, no hour 25", "[clock]") {
  for (const char* bad :
       {"2026-02-31T25:61:61Z", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-01-00T00:00:00Z", "2026-01-10T24:00:00Z", "2026-01-10T10:60:00Z", "2026-01-10T10:00:60Z",
        "2026-01-10 10:00:00Z", "2026-1-10T10:00:00Z", " 2026-01-10T10:00:00Z", "+026-01-10T10:00:00Z",
        "2026-01-10T10:00:00.Z", "2026-01-10T10:00:00+24:00", "2026-01-10T10:00:00+01:60", "2026-01-10T10:00:00+1",
        "2026-01-10T10:00:00ZZ", "2026-01-10T10:00", ""})
    CHECK_FALSE(parse_iso8601(bad));
  CHECK(parse_iso8601("2024-02-29T00:00:00Z") == 1709164800);  // a leap year
  CHECK_FALSE(parse_iso8601("2100-02-29T00:00:00Z"));          // not one
  CHECK(parse_iso8601("2000-02-29T00:00:00Z"));                // 400 years: one
}

TEST_CASE("issue 25: an offset is accepted and taken off: the same instant in UTC", "[clock]") {
  const int64_t utc = *parse_iso8601("2026-01-10T09:00:00Z");
  for (const char* same :
       {"2026-01-10T10:00:00+01:00", "2026-01-10T10:00:00+0100", "2026-01-10T10:00:00+01", "2026-01-10T04:30:00-04:30",
        "2026-01-10T09:00:00.999Z", "2026-01-10T09:00:00", "2026-01-10t09:00:00z"})
    CHECK(parse_iso8601(same) == utc);
  CHECK(iso8601_utc(*parse_iso8601("2026-01-10T10:00:00+01:00")) == "2026-01-10T09:00:00Z");
}

// issue 24: iso8601_utc computes the date itself (gmtime_r loaded the time
// zone first); the same text as gmtime_r for every kind of day
namespace {
// e as gmtime_r reads it, "YYYY-MM-DDTHH:MM:SSZ"; its fields in *out too
std::string gmtime_text(int64_t e, struct tm* out = nullptr) {
  time_t t = static_cast<time_t>(e);
  struct tm tm;
  REQUIRE(gmtime_r(&t, &tm) != nullptr);
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (out) *out = tm;
  return text;
}
}  // namespace

TEST_CASE("iso8601_utc gives gmtime_r's date and time", "[clock]") {
  std::vector<int64_t> epochs = {0,          1,          59,           86399, 86400,  951782400, 951868800,
                                 4107542400, 1736503200, 253402300799, -1,    -86400, -86401};
  for (int64_t e = 0; e < 253402300799; e += 7919 * 86400 + 3607) epochs.push_back(e);
  for (int64_t e : epochs) {
    const std::string want = gmtime_text(e);
    CHECK(iso8601_utc(e) == want);
  }
}

// issue 24: parse_iso8601 counts the days itself (timegm brought glibc's time
// zone code, sscanf and every strto* into every tool); timegm's count for
// every kind of day, leap days and the years 0000 and 9999 included
TEST_CASE("parse_iso8601 gives timegm's epoch", "[clock]") {
  std::vector<int64_t> epochs = {0,  1,      86399,       86400, 951782400, 951868800, 4107542400, 253402300799,
                                 -1, -86401, -62167219200};  // 0000-01-01
  for (int64_t e = -62167219200; e < 253402300799; e += 7919 * 86400 + 3607) epochs.push_back(e);
  for (int64_t e : epochs) {
    struct tm tm;
    const std::string text = gmtime_text(e, &tm);
    CAPTURE(text);
    CHECK(parse_iso8601(text) == static_cast<int64_t>(timegm(&tm)));
    CHECK(parse_iso8601(text) == e);
  }
}

TEST_CASE("issue 39: parse_day reads a day as written, or an ISO 8601 time as its local day", "[clock]") {
  const TimeZone utc = TimeZone::named("UTC0");
  const TimeZone plus9 = TimeZone::named("JST-9");
  CHECK(parse_day("2024-02-29", utc) == "2024-02-29");
  CHECK(parse_day("2024-02-29", plus9) == "2024-02-29");  // a day is no instant: no zone moves it
  CHECK(parse_day("2026-01-10T10:00:00+01:00", utc) == "2026-01-10");
  CHECK(parse_day("2026-01-10T00:30:00+01:00", utc) == "2026-01-09");
  CHECK(parse_day("2026-01-10T20:00:00Z", plus9) == "2026-01-11");
  CHECK(parse_day("2026-01-10T20:00:00.5-0300", utc) == "2026-01-10");
  for (const char* bad :
       {"2025-02-29", "2025-13-01", "2025-1-10", "2025-01-10x", "", "2025-01-10T10:00", "2025-01-10T24:00:00Z",
        "2025-01-10T10:00:00+1", "2025-01-10 10:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"})
    CHECK_FALSE(parse_day(bad, utc));
}
