// The clock seam for tests: LOOPKIT_NOW set for one test (the old value
// restored after), at one instant or as a clock file that the test moves.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace loopkit::testing {

class ClockOverride {
public:
  explicit ClockOverride(const std::string& value) {
    if (const char* old = std::getenv("LOOPKIT_NOW")) saved_ = old;
    setenv("LOOPKIT_NOW", value.c_str(), 1);
  }
  ~ClockOverride() {
    if (saved_) setenv("LOOPKIT_NOW", saved_->c_str(), 1);
    else unsetenv("LOOPKIT_NOW");
  }
  ClockOverride(const ClockOverride&) = delete;
  ClockOverride& operator=(const ClockOverride&) = delete;

private:
  std::optional<std::string> saved_;
};

// Every age judged is exact whatever second the test runs in.
struct FixedClock : ClockOverride {
  static constexpr int64_t now = 1736503530;
  FixedClock() : ClockOverride(std::to_string(now)) {}
};

// LOOPKIT_NOW=@FILE: time moves when the test says, without sleeping.
class MovableClock : ClockOverride {
public:
  MovableClock(const std::string& file, int64_t start) : ClockOverride("@" + file), file_(file) { set(start); }
  void set(int64_t t) {
    now_ = t;
    std::ofstream(file_) << t << "\n";
  }
  void advance(int64_t seconds) { set(now_ + seconds); }
  int64_t now() const { return now_; }

private:
  std::string file_;
  int64_t now_ = 0;
};

}  // namespace loopkit::testing
