// Waiting for a change at one name in a folder (inotify), for a waiter
// that would otherwise poll: lock-acquire --wait wakes when the lock it
// waits for is released or replaced instead of at its next poll. Where
// there are no events (no inotify, no watches left) the watch never arms
// and the caller polls; where events are incomplete (NFS reports only this
// host's changes) the caller's timeout still bounds every wait.
//
// The watch is armed only while its waiter pauses, and disarmed before the
// waiter acts: closing an inotify instance right after its watch went
// waits for the kernel to free the watch (an SRCU grace period, up to
// about 16 ms one close in twenty on a 6.18 kernel), which would come
// between a waiter's taking of the lock and its exit. Disarmed before the
// attempt, the watch is freed while the attempt syncs to disk.
#pragma once
#include <string>
#include <sys/types.h>

#include "sys/base/fd.hpp"

namespace loopkit {

class NameWatch {
public:
  // A watch of name (a single component) in dir, not yet armed; it never
  // arms when there is no inotify.
  NameWatch(std::string dir, std::string name);
  // Starts watching; false when it cannot (no inotify, no watches left,
  // no folder). Changes from then on count, none before.
  bool arm();
  // Stops watching; the changes queued meanwhile are dropped.
  void disarm();
  bool armed() const { return wd_ >= 0; }
  // Waits up to seconds for the name to be created, removed, renamed away
  // or over, or written (or for the folder itself to go, or the event queue
  // to overflow: then something may have changed). True on such a change,
  // false when the time ran out or a signal came; at once false when not
  // armed. Changes since arming that were not yet waited for count.
  bool wait(double seconds);
  // What wait_or_exit saw first.
  enum class Woke { time_up, changed, exited };
  // As wait, and ends too when process pid exits (a pidfd; where there is
  // none, the process is looked at once a second). Not armed, it waits for
  // the exit alone. A signal ends it as time_up: the caller looks at it.
  Woke wait_or_exit(double seconds, pid_t pid);

private:
  bool drain();

  Fd fd_;
  int wd_ = -1;
  std::string dir_;
  std::string name_;
};

}  // namespace loopkit
