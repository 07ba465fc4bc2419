// "Now" for processes that outlive an instant: a heartbeat loop must write
// a fresh time at each beat, where now_epoch() is frozen for the whole run.
#pragma once
#include <cstdint>

namespace loopkit {

// LOOPKIT_NOW when set (tests and replays stay frozen), else the wall clock
// read afresh on each call.
int64_t current_epoch();

}  // namespace loopkit
