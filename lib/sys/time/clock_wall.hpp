// The wall clock with its fraction, apart from clock.hpp, which every tool
// includes.
#pragma once

namespace loopkit {

// Epoch seconds with their fraction on the wall clock (never faked): a
// time another process took from its own ($EPOCHREALTIME) compares.
double wall_seconds();

}  // namespace loopkit
