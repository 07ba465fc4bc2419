// Waiting for a change at one name in a folder (inotify), for a waiter
// that would otherwise poll: lock-acquire --wait wakes when the lock it
// waits for is released or replaced instead of at its next poll. Where
// there are no events (no inotify, no watches left) the watch is inactive
// and the caller polls; where events are incomplete (NFS reports only this
// host's changes) the caller's timeout still bounds every wait.
#pragma once
#include <string>

#include "sys/fd.hpp"

namespace loopkit {

class NameWatch {
public:
  // Watches name (a single component) in dir; inactive when it cannot.
  NameWatch(const std::string& dir, std::string name);
  bool active() const { return static_cast<bool>(fd_); }
  // Waits up to seconds for the name to be created, removed, renamed away
  // or over, or written (or for the folder itself to go, or the event queue
  // to overflow: then something may have changed). True on such a change,
  // false when the time ran out or a signal came; at once false when
  // inactive. Changes before the call that were not yet waited for count.
  bool wait(double seconds);

private:
  Fd fd_;
  std::string name_;
};

}  // namespace loopkit
