// The clock seam: LOOPKIT_NOW replaces "now" for every time written or aged:
// epoch seconds (a stopped clock), or @FILE, the epoch seconds that FILE
// holds when the clock is read (a clock that a test moves without sleeping).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loopkit {

class TimeZone;  // sys/time/tz.hpp

// The largest "now" LOOPKIT_NOW may name: 9999-12-31T23:59:59Z.
inline constexpr int64_t max_epoch = 253402300799;
// Exit 2 unless LOOPKIT_NOW is unset, empty, epoch seconds from 0 to
// max_epoch or @FILE holding such (every tool checks it at start, before
// touching anything; a clock file that goes bad later is exit 2 then).
void check_clock_override();
// The instant of this invocation's write, read once: all "now"s written by
// one state-set, event-append or ctx-save are the same. Never for deciding
// about a lock, which takes current_epoch() at each decision.
int64_t now_epoch();
// The clock read now: LOOPKIT_NOW (its file read again), else the wall
// clock. Read where a decision is made (each attempt, each record written,
// each age judged), so that no value frozen at start-up ages a lock.
int64_t current_epoch();
// now - then, saturating instead of overflowing (a crafted epoch of
// INT64_MIN is a huge age, not a negative one).
int64_t age_between(int64_t now, int64_t then);
std::string iso8601_utc(int64_t epoch);  // 2025-01-10T10:05:30Z
// YYYY-MM-DDTHH:MM:SS[.frac][Z|+HH:MM|+HHMM|+HH], calendar-checked (no
// February 31st, no hour 25); an offset is taken off: epoch seconds, UTC
std::optional<int64_t> parse_iso8601(std::string_view text);
// The one reading of a date a tool is given (progress-append --date,
// progress-show --since): YYYY-MM-DD, a real day, as written; or a time
// parse_iso8601 reads (2026-01-10T10:00:00+01:00, ...Z), which names the day
// that instant falls on in local time (the process's zone, or zone), the
// calendar the tools date entries by. nullopt for anything else.
std::optional<std::string> parse_day(std::string_view text);
std::optional<std::string> parse_day(std::string_view text, const TimeZone& zone);
// YYYY-MM-DD in local time: the process's time zone (TZ, sys/time/tz.hpp), or zone
std::string local_date(int64_t epoch);
std::string local_date(int64_t epoch, const TimeZone& zone);
// Seconds on a monotonic clock, for waiting and intervals (never faked).
double monotonic_seconds();
void sleep_seconds(double seconds);  // returns early on a signal

}  // namespace loopkit
