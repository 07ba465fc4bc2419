// The store of locks (issue 22), implemented by files (lock_files.cpp)
// and by etcd keys (core/etcd/lock_etcd.cpp); acquire, wait, refresh,
// takeover, release and reap are written once over it (lock.cpp). It keeps
// records; what a lock means (staleness, the words for it) is lock_record's.
//
// The calling sequence (how lock.cpp uses it):
//
// - open_lock_store(operand) picks the store of a LOCKFILE operand: a file,
//   or an etcd URL (in loopkit-etcd only).
// - create(record) writes a record where nothing is; false when something
//   is there, and then read() says what (LockEntry; its text as stored).
// - To replace or remove an entry read: hold() first (files: the folder's
//   flock, under which the entry is read again; etcd: nothing), then
//   replace(seen, record) or remove(seen), which change nothing and return
//   false when the entry is no longer the one seen. The hold ends when the
//   Fd it returned is closed.
// - A holder keeps its lock alive through session(owner): stamp() completes
//   a new record (files: the heartbeat fields; etcd: the lease), beat()
//   refreshes a held one (files: a fresh heartbeat in the record; etcd: the
//   lease kept alive); the beat's policy (how often, how long an outage is
//   ridden out) is the session's and beat_every/outage_limit's.
// - A waiter (lock-acquire --wait) joins the line (join_line) and waits on
//   its watch between attempts (open_lock_watch, join_wait_line: a store of
//   files by the lock's name, any other by watch() and join_line()); either
//   may be nullptr (no line, a poll).
// - list_locks(operands) gives the locks that lock-status's or lock-reap's
//   operands name (a file, every *.lock of a folder, an etcd key or the
//   keys under a prefix), each with its store, for both tools to judge,
//   print and reap alike; an etcd store lists its own through list().
//
// Errors: a "no" is a value (false, a missing entry, nullopt); a store
// that cannot be read or written throws loopkit::Error with its exit code
// (4 for the system, 2 for a malformed operand), worded
// `cannot VERB 'NAME': strerror` by sys/. Nothing is left half written: a
// record takes its name by one link or rename (files) or one conditioned
// transaction (etcd).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lock/lock_record.hpp"
#include "sys/base/fd.hpp"

namespace loopkit {

// What a waiter waits on between two attempts (LockStore::watch): a
// waiter wakes at the first change of the lock instead of at its next poll
// (issue 24: a released lock handed over in about a millisecond, as
// flock(1) does). A file lock's watch is inotify on its folder, which
// misses changes that bring no event (NFS, other hosts): its waiter still
// polls at the backoff's pace. An etcd lock's watch is etcd's own on the
// key, from the revision the last attempt read (as `etcdctl lock` waits):
// it misses nothing, so its waiter stops polling until the watch breaks.
class LockWatch {
public:
  virtual ~LockWatch() = default;
  // false: there are no events to wait for, and the waiter polls
  virtual bool active() const = 0;
  // Before an attempt: a watch that should not be left to its waiter's
  // exit stops (a file lock's, sys/fs/watch.hpp says why), when the attempt
  // may well take the lock.
  virtual void disarm() {}
  // After a failed attempt: watches again; true when it was not watching
  // since that attempt's read, so that a change meanwhile may be unseen and
  // the waiter attempts once more before it pauses.
  virtual bool rearm() { return false; }
  // Waits up to seconds for a change of the lock: true on one (or when
  // something may have changed), false when the time ran out or a signal
  // came. Changes since the last attempt's read that were not yet waited
  // for count.
  virtual bool wait(double seconds) = 0;
  // How long the pause before the next attempt lasts, given the backoff's:
  // a watch that sees every change lets its waiter wait longer.
  virtual double pause(double backoff) const { return backoff; }
};

class WaitLine;  // lock_queue.hpp
class Error;     // sys/base/error.hpp

class LockStore;
// The watch for a waiter on store (a lock file's name watched in its
// folder, else LockStore::watch); nullptr when it has none (it polls).
std::unique_ptr<LockWatch> open_lock_watch(LockStore& store);

// What a store holds at the lock's name, and what the store knows of it.
struct LockEntry : LockFile {
  std::string key;             // etcd: the key; files: ""
  int64_t revision = 0;        // etcd: the mod revision, the fencing token; files: 0
  int64_t lease = 0;           // etcd: the lease the key is put with
  std::optional<int64_t> ttl;  // etcd: seconds left on that lease, when asked
};

// What keeps a lock alive while its owner holds it.
class LockSession {
public:
  virtual ~LockSession() = default;
  // Completes a new record for this store (files: heartbeat fields; etcd:
  // the session's lease, granted at the first call).
  virtual void stamp(JsonMembers& record, int64_t now) = 0;
  // Keeps `held`, which is ours, alive: files write a fresh heartbeat (with
  // `every` as heartbeat_every), etcd keeps its lease alive and adopts it.
  // The record now held, or nullopt when the lock went meanwhile.
  virtual std::optional<JsonMembers> beat(const LockEntry& held, int64_t now, std::optional<double> every) = 0;
  // A wait's pause went by (etcd: the lease it will put must outlive it).
  virtual void waited() {}
  // The lock was not got: what the session made for it is given back.
  virtual void abandon() {}
  // The revision of the last write that got the lock (etcd), else 0.
  virtual int64_t revision() const { return 0; }
  // Gives up the lock this session got, without reading it first, where
  // the store can (etcd: revoking the session's lease deletes the key only
  // while it still carries that lease, so a lock taken over meanwhile
  // stays its new holder's). False where it cannot (files): release_lock.
  virtual bool release_own() { return false; }
  // Keeps the lock alive in the background while its owner lives, after
  // the tool has gone (etcd's keeper; files: the owner beats itself).
  virtual void keep_in_background(const Owner&) {}
};

class LockStore {
public:
  virtual ~LockStore() = default;
  // Writes the record where nothing is; false when something is there.
  virtual bool create(const JsonMembers& record) = 0;
  virtual LockEntry read() = 0;
  // Held while deciding about an entry to replace or remove (files: the
  // folder's flock, under which the entry is read again; etcd: nothing,
  // its writes compare the revision read).
  virtual Fd hold() = 0;
  // Whether the flock hold() takes is the one that folder_fd, an open
  // folder this process has flocked, already holds (a missing document's
  // folder is the lock's): then it is not taken twice, which would wait
  // for itself for ever.
  virtual bool held_through(int /*folder_fd*/) const { return false; }
  // Only the entry read: false, changing nothing, when it changed or went.
  virtual bool replace(const LockEntry& seen, const JsonMembers& record) = 0;
  virtual bool remove(const LockEntry& seen) = 0;
  // The same while held: held is what hold() returned (a file store removes
  // through the folder it flocked instead of opening it again)
  virtual bool remove_held(const LockEntry& seen, const Fd& /*held*/) { return remove(seen); }
  // Whether a stale entry is read and judged again under hold() before it
  // is reaped (files); else (etcd) the entry as listed goes, its removal
  // comparing the revision read, as one store lists many keys.
  virtual bool judges_again_when_held() const { return true; }
  virtual std::unique_ptr<LockSession> session(const Owner& owner) = 0;
  // Whether an entry is stale (judge_lock; etcd: leases, not heartbeats,
  // say who lives on other hosts, and an unreadable key is never stale).
  virtual Verdict judge(const LockEntry& e, const StalePolicy& asked) const { return judge_lock(e, asked); }
  // The locks under an operand of lock-status or lock-reap, named as the
  // user would (etcd: the key, or every key under a URL ending in '/').
  struct Named {
    std::string name;
    LockEntry entry;
  };
  virtual std::vector<Named> list(const std::string& operand, bool with_ttl);
  // Files: an owner releasing a lock that its own beater still refreshes
  // leaves the released mark (lock.hpp); etcd: nothing to say.
  virtual void mark_released(const LockEntry&) {}
  // Whether a lock that `owner` held since taken_at and that is no longer
  // there as it was went by its owner's release (a clean end for a beater).
  virtual bool was_released(const Owner& owner, const std::string& taken_at, bool missing) = 0;
  // The lock's file, for a store of files; "" for any other. A file's
  // waiter watches its name and queues beside it (open_lock_watch,
  // join_wait_line), built there rather than by the store, so that only a
  // tool that waits links inotify and the tickets.
  virtual std::string file() const { return {}; }
  // What a waiter of lock-acquire --wait waits on between two attempts, in
  // a store with a watch of its own (etcd: the key's watch); nullptr:
  // nothing to wait on, the waiter polls.
  virtual std::unique_ptr<LockWatch> watch();
  // A place in the line of waiters, in a store with a line of its own
  // (etcd: a key on the waiter's lease; lock_queue.hpp); throws (exit 4)
  // when no place can be taken; nullptr: the store has no line.
  virtual std::unique_ptr<WaitLine> join_line();
  // Whether a failed beat of keep_heartbeat is said and tried again at the
  // next (etcd out of reach: the lease may live on) rather than the end.
  virtual bool tolerates_outage() const { return false; }
  // The pause of keep_heartbeat between two beats: up to `seconds`, ended
  // early by the owner's exit (true) and, where the store can see it (files:
  // the lock's name is watched), by a change of the lock, after which the
  // caller reads it again: the owner's lock-release then ends its beater at
  // once, not at the next beat.
  enum class Pause { time_up, changed, owner_exited };
  virtual Pause pause_between_beats(const Owner& owner, double seconds);
  // What holding a lock while a command runs means here: how often a beat
  // is due for a --heartbeat of `asked` seconds, how long beats may fail
  // before the lock counts as lost, and whether a lost lock ends the
  // command (etcd: another may take it at once) or is only said (files).
  virtual double beat_every(double asked) const { return asked; }
  virtual double outage_limit() const { return 0; }
  virtual bool lost_ends_command() const { return false; }
  // lock-status's and lock-acquire's words for an entry at `name`.
  virtual std::string describe(const std::string& name, const LockEntry& e, const Verdict& v) const;
  virtual std::string to_json(const std::string& name, const LockEntry& e, const Verdict& v) const;
};

// The store of a LOCKFILE operand: a file, or an etcd URL (only in
// loopkit-etcd, where lock_store_on_etcd is set; the tools in bin/ hand
// such a call over to it before they get here).
struct StoreOptions {
  double timeout = 5;  // etcd: per call
  int64_t ttl = 60;    // etcd: the lease of a new lock
  double wait = 0;     // etcd: a waiter's --wait, through which its calls ride out an outage
};
// listed_regular: a folder listing said path is a regular file
std::unique_ptr<LockStore> file_lock_store(const std::string& path, bool listed_regular = false);
// A folder (for list) is accepted only when `folder`.
std::unique_ptr<LockStore> open_lock_store(const std::string& operand, const StoreOptions& options,
                                           bool folder = false);
using LockStoreOnEtcd = std::unique_ptr<LockStore> (*)(const std::string& url, const StoreOptions& options,
                                                       bool folder);
extern LockStoreOnEtcd lock_store_on_etcd;

// One lock that list_locks found, handed to its caller while it lives.
struct ListedLock {
  const std::string& name;  // as the user would name it: the file, the key
  LockStore& store;         // where it is: judge, remove and print through it
  const LockEntry& entry;   // empty when error
  // The operands name this lock alone (the one file operand, not a folder;
  // an etcd key): the exit status answers for it.
  bool one = false;
  bool file = false;  // a file operand's, whose exit status outranks an etcd URL's
  // It could not be read at all (a link, a FIFO): the caller runs inside
  // the handler, so `throw;` passes the error on.
  const Error* error = nullptr;
};
struct ListOptions {
  bool missing_is_free = false;  // lock_files_named's
  bool with_ttl = false;         // etcd: each lease's seconds left
  double timeout = 5;            // etcd: per call
};
// The locks that operands of lock-status or lock-reap name, handed to each
// one by one as they are read, in the order the tools have always said
// them: every etcd URL in turn, then the file operands' locks together
// (lock_files_named), so that an error stops a sweep where it always did.
void list_locks(const std::vector<std::string>& operands, const ListOptions& options,
                const std::function<void(const ListedLock&)>& each);

}  // namespace loopkit
