#include "sys/wallclock.hpp"

#include <cstdlib>
#include <ctime>

#include "sys/clock.hpp"

namespace loopkit {

int64_t current_epoch() {
  static const bool faked = [] {
    const char* env = std::getenv("LOOPKIT_NOW");
    return env && *env;
  }();
  return faked ? now_epoch() : static_cast<int64_t>(std::time(nullptr));
}

}  // namespace loopkit
