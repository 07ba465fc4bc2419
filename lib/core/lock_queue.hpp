// The line of waiters of a lock file (lock-acquire --wait): first come,
// first served. Each waiter that found the lock held takes a numbered
// ticket beside it, ".NAME.wait.NUMBER", holding its pid and start time;
// at a release, only the waiter with the lowest ticket of a live waiter
// tries to take the lock, instead of every waiter racing for it.
//
// Nothing can hold the line up for long: a ticket whose waiter has died is
// removed by the next waiter that looks at the line, and a lock left free
// for longer than queue_grace (the first waiter stopped, say) is open to
// every waiter again. Callers that do not wait never look at the line.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/storage.hpp"

namespace loopkit {

// How long a free lock is left to the first waiter in line
inline constexpr double queue_grace = 2.0;

class WaitTicket {
public:
  // A ticket behind every ticket in line for the lock file at path; the
  // waiter is this process. Throws (exit 4) when no ticket can be made.
  explicit WaitTicket(const std::string& path);
  WaitTicket(const WaitTicket&) = delete;
  WaitTicket& operator=(const WaitTicket&) = delete;
  ~WaitTicket();  // leaves the line

  // Whether this waiter may try to take the lock now: no live waiter is
  // ahead of it, or the lock has been free (lock_free, asked only then)
  // for longer than queue_grace.
  bool my_turn(const std::function<bool()>& lock_free);

private:
  std::string dir_, prefix_;
  std::string name_;  // the ticket's path
  std::optional<double> free_since_;
  bool is_first();
};

// A place in the line of a file store's lock; nullptr for other stores, or
// when no ticket can be made (the wait goes on without one)
std::unique_ptr<WaitTicket> join_wait_line(const LockStore& store);

}  // namespace loopkit
