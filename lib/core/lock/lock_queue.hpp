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
//
// An etcd lock's line is made of keys (lock_etcd.cpp): ".NAME.wait.LEASE"
// beside the key, on the waiter's lease, ordered by their create revisions;
// the waiter's create transaction itself checks that no older ticket lives,
// so a hand-off costs no request more than the race it replaces. A refused
// create's answer holds the line, and the tickets ahead whose waiters this
// host can tell are gone (their pid and boot, named with the host) go.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/lock/store.hpp"

namespace loopkit {

// How long a free lock is left to the first waiter in line
inline constexpr double queue_grace = 2.0;

// A waiter's place in a line (a ticket file, or an etcd key)
class WaitLine {
public:
  virtual ~WaitLine() = default;  // leaves the line
  // Whether this waiter may try to take the lock now: no live waiter is
  // ahead of it, or the lock has been free (lock_free, asked only then)
  // for longer than queue_grace. A line whose attempts check the turn
  // themselves (etcd's) answers true.
  virtual bool my_turn(const std::function<bool()>& lock_free) = 0;
  // After an attempt that found the lock free and did not take it: whether
  // the line refused it (a waiter ahead), so that the waiter waits on
  virtual bool refused_last_attempt() const { return false; }
};

class WaitTicket : public WaitLine {
public:
  // A ticket behind every ticket in line for the lock file at path; the
  // waiter is this process. Throws (exit 4) when no ticket can be made.
  explicit WaitTicket(const std::string& path);
  WaitTicket(const WaitTicket&) = delete;
  WaitTicket& operator=(const WaitTicket&) = delete;
  ~WaitTicket() override;
  bool my_turn(const std::function<bool()>& lock_free) override;

private:
  std::string dir_, prefix_;
  std::string name_;  // the ticket's path
  std::optional<double> free_since_;
  bool is_first();
};

// A place in the line of the store's lock (a ticket beside a lock file,
// else LockStore::join_line); nullptr
// for a store without a line, or when no place can be taken (said as a
// warning: the wait goes on without one)
std::unique_ptr<WaitLine> join_wait_line(LockStore& store);

// "PID START\n": this process, as a ticket names its waiter
std::string waiter_text();
// "PID START BOOT HOST\n" ("-" for a start time or boot id not known): this
// process, as an etcd ticket names its waiter, for waiters on every host
std::string waiter_text_with_host();
// Whether an etcd ticket's text names a waiter of this host that is gone
// (not running, or from before the host's last boot): section 5's rules
// for a lock's owner. False for another host's waiter, and for a ticket
// without a host (an older loopkit's): nobody here can tell.
bool is_local_waiter_gone(std::string_view text);

// The tickets of the lock key DIR/NAME: "DIR/.NAME.wait.", and the one on
// a lease: its id in 16 hex digits after that
std::string wait_ticket_prefix(const std::string& key);
std::string wait_ticket_key(const std::string& key, int64_t lease);

// Whether the last part of a key (after its last '/') is a ticket's name,
// ".NAME.wait." and 16 hex digits: a waiter's, never a lock
bool is_wait_ticket_key(std::string_view key);
// Whether key is a ticket in the line whose prefix (wait_ticket_prefix) it
// starts with: that prefix and 16 hex digits. The line of lock
// "NAME.wait.X" starts with the same prefix, and is another line.
bool is_ticket_in_line(std::string_view key, std::string_view prefix);

}  // namespace loopkit
