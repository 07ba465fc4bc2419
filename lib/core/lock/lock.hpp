// Session locks (man/lock-acquire.1.scd and loopkit.7.scd): created
// atomically, refreshed, taken over and reaped without races, written once
// over the store of locks (store.hpp) that files and etcd keys
// implement. Why the file store is race-free is argued in lock_files.cpp,
// beside the code; ARCHITECTURE.md follows one race through it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lock/lock_record.hpp"
#include "core/lock/store.hpp"

namespace loopkit {

struct AcquireRequest {
  std::string session;
  Owner owner;
  StalePolicy policy;
  double wait_seconds = 0;  // retry with backoff until then
  // sleeps between retries; returning false gives up (a signal arrived)
  std::function<bool(double)> pause;
};
struct AcquireResult {
  enum Outcome { created, took_over, refreshed, held, interrupted } outcome = held;
  JsonMembers record;  // what we wrote (or, refreshed on etcd, what is there)
  LockEntry holder;    // held: who holds it
  Verdict verdict;     // took_over: why the old one was stale
  // got: the session that keeps the lock alive (its lease, its revision)
  std::unique_ptr<LockSession> session;
};
// Create, take over a stale lock, or refresh our own; retry with backoff
// while it is held, until request.wait_seconds have passed. Each attempt
// makes its record and judges the holder with the clock read then.
AcquireResult acquire_lock(LockStore& store, const AcquireRequest& request);
AcquireResult acquire_lock(const std::string& path, const AcquireRequest& request);

// Refresh heartbeat and heartbeat_epoch if the lock is ours. A beater that
// keeps beating every `every` seconds records that as heartbeat_every, so
// that judge_lock never takes its live owner for stale between two beats,
// and its own pid as heartbeat_pid.
struct RefreshResult {
  // released: only from keep_heartbeat, when its owner released the lock
  enum Outcome { refreshed, not_ours, missing, released } outcome = missing;
  LockEntry holder;        // not_ours: who holds it
  std::string started_at;  // refreshed: that of the record written (a bare pid file gets one then)
};
RefreshResult refresh_heartbeat(LockStore& store, const Owner& owner, int64_t now,
                                std::optional<double> every = std::nullopt);
RefreshResult refresh_heartbeat(const std::string& path, const Owner& owner, int64_t now,
                                std::optional<double> every = std::nullopt);
// The beat policy, the one rule of every holder (ARCHITECTURE.md, "One
// beat policy"): beats that fail because the store is out of reach are
// tolerated while the lease may still live: until the store's
// outage_limit() (an etcd lease's TTL; a lock file: no limit) has passed
// since the last beat the store confirmed, counted from the moment that
// beat was sent (the store renewed it later, never earlier), less margin:
// the time the holder needs to end what it runs under the lock. The
// seconds left (<= 0: the lock counts as lost); +infinity where the store
// sets no limit. confirmed_sent and now on one clock, the caller's.
double beat_budget_left(const LockStore& store, double confirmed_sent, double now, double margin = 0);

// Refresh every `every` seconds until the owner exits (waiting on it, so
// that the loop ends as soon as it dies, not up to a beat later) or the lock
// is lost; the outcome of the last refresh, or `released` when the lock it
// refreshed was gone (or replaced) because its owner released it: the
// owner's release left the released mark (below) for it, which it removes.
// A caught SIGINT/SIGTERM (sys/proc/interrupt.hpp) ends it between beats, never
// in the middle of one, so no temporary file is left beside the lock.
// A store that tolerates outages (etcd) has a failed beat said through
// warn() and tried again at the next while beat_budget_left() allows; then
// the error ends it.
RefreshResult keep_heartbeat(LockStore& store, const Owner& owner, double every);
RefreshResult keep_heartbeat(const std::string& path, const Owner& owner, double every);

// Remove the lock if ours (or anyone's, forced): only the regular file that
// was read and judged under the folder's flock is unlinked; a name that
// became something else meanwhile is exit 4 and stays. With mark_released,
// an owner releasing its own lock whose beater (heartbeat_every and
// heartbeat_pid, written by refresh_heartbeat with `every`) still runs
// first leaves the lock's last text at released_mark_path, so that the
// beater can tell this normal end from a lock deleted under it.
enum class Released { removed, not_ours, missing };
Released release_lock(LockStore& store, const Owner& owner, bool force, bool mark_released = false);
Released release_lock(const std::string& path, const Owner& owner, bool force, bool mark_released = false);
// The lock that `session` got for `owner`, given up when its holder is done
// (lock-acquire -- COMMAND): by the session itself where the store can
// without a read (etcd: one revoke), else as release_lock.
void release_got(LockStore& store, LockSession& session, const Owner& owner);
// "locks/.NAME.released" for "locks/NAME": a dot file, which sweeps skip
std::string released_mark_path(const std::string& path);

// Remove the lock if it is stale when looked at under the folder's lock.
struct ReapResult {
  enum Outcome { live, stale, removed, unreadable, missing, failed } outcome = missing;
  LockEntry lock;
  Verdict verdict;
  std::string error;  // failed: why the stale lock could not be removed
};
ReapResult reap_lock(LockStore& store, const StalePolicy& policy, bool dry_run);
// The same for an entry already read (list_locks's): it is the first look.
ReapResult reap_listed(LockStore& store, const LockEntry& seen, const StalePolicy& policy, bool dry_run);
ReapResult reap_lock(const std::string& path, const StalePolicy& policy, bool dry_run, bool listed_regular = false);

// A lock is a file that other processes see: "-" (standard input, for the
// tools that read) names none, exit 2; "./-" is a file named "-".
const std::string& lock_operand(const std::string& operand);
// The lock files that operands name: a folder's *.lock files, or the file.
std::vector<std::string> lock_files_in(const std::vector<std::string>& operands);
// The same, and whether the operands name one lock (names_one_lock), from
// one look at each operand
struct LockFiles {
  struct File {
    std::string path;
    bool listed_regular = false;  // a folder listed it as a regular file
  };
  std::vector<File> files;
  bool one = false;
};
// missing_is_free: a name that is not there, in a folder that is not there
// either, is a free lock when it ends in ".lock" and an empty folder
// otherwise (lock-status in a fresh project), not a mistake (lock-reap's
// wrong LOCK_DIRS)
LockFiles lock_files_named(const std::vector<std::string>& operands, bool missing_is_free = false);
// Whether operands name one lock file alone (not a folder): then the exit
// status answers for that lock, and a file that cannot be read at all (a
// link, a FIFO) is refused with exit 4; in a sweep it is a warning.
bool names_one_lock(const std::vector<std::string>& operands);
// Default session: the file name without ".lock".
std::string session_of_path(const std::string& path);
// The session a new record names: given, else session_of_path. A record is
// JSON, which holds UTF-8 text only: a name that is not (a Latin-1 file
// name) is exit 2, asking for --session, never a record nobody can read.
std::string lock_session(const std::string& path, const std::optional<std::string>& given);

}  // namespace loopkit
