// The clock seam: LOOPKIT_NOW replaces "now" for every time written or aged.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loopkit {

// The largest "now" LOOPKIT_NOW may name: 9999-12-31T23:59:59Z.
inline constexpr int64_t max_epoch = 253402300799;
// Exit 2 unless LOOPKIT_NOW is unset, empty, or epoch seconds from 0 to
// max_epoch (every tool checks it at start, before touching anything).
void check_clock_override();
// Epoch seconds; the same value for the whole run (all "now"s of one
// invocation are one instant). LOOPKIT_NOW overrides it.
int64_t now_epoch();
// "Now" for a process that outlives an instant (a heartbeat loop writes a
// fresh time at each beat): LOOPKIT_NOW when set, else the wall clock read
// afresh on each call.
int64_t current_epoch();
std::string iso8601_utc(int64_t epoch);                       // 2025-01-10T10:05:30Z
std::optional<int64_t> parse_iso8601(std::string_view text);  // UTC forms only
std::string local_date(int64_t epoch);                        // YYYY-MM-DD in local time
// Seconds on a monotonic clock, for waiting and intervals (never faked).
double monotonic_seconds();
void sleep_seconds(double seconds);  // returns early on a signal

}  // namespace loopkit
