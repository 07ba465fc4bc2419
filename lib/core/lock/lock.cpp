// Acquire, wait, refresh, take over, release and reap, written once over
// the store of locks (store.hpp): the file store (lock_files.cpp, where
// the argument for why it is race-free sits) and the etcd store
// (lock_etcd.cpp) only create, read, replace or remove an entry, and keep a
// held lock alive.
#include "core/lock/lock.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <unistd.h>

#include "core/lock/lock_queue.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/folder.hpp"
#include "sys/proc/interrupt.hpp"
#include "sys/proc/proc.hpp"

namespace loopkit {

namespace {
bool is_ours(const LockFile& lock, const Owner& owner) {
  return lock.state == LockFile::readable && is_lock_ours(lock.record, owner);
}

// One attempt: create, or decide about the existing lock while holding it.
// The record is made at each attempt: one made when a wait began would be
// as old as the wait the moment it is written, stale at once for anyone
// with a --stale-after shorter than that.
// A line that refused an attempt that found the lock free (a waiter is
// ahead) ends it as "held" by nobody: the waiter waits for its turn.
AcquireResult try_acquire(LockStore& store, LockSession& session, const AcquireRequest& req, const WaitLine* line) {
  AcquireResult res;
  for (;;) {
    JsonMembers mine = new_lock_record(req.session, req.owner, current_epoch());
    session.stamp(mine, current_epoch());
    if (store.create(mine)) {
      res.outcome = AcquireResult::created;
      res.record = std::move(mine);
      return res;
    }
    Fd held_still = store.hold();
    LockEntry held = store.read();
    if (held.state == LockFile::missing && line && line->refused_last_attempt()) {
      res.outcome = AcquireResult::held;
      res.holder = std::move(held);
      return res;
    }
    if (held.state == LockFile::missing) continue;  // released meanwhile: create it afresh
    if (is_ours(held, req.owner)) {
      auto beaten = session.beat(held, current_epoch(), std::nullopt);
      if (!beaten) continue;  // deleted meanwhile
      res.outcome = AcquireResult::refreshed;
      res.record = std::move(*beaten);
      return res;
    }
    res.verdict = store.judge(held, req.policy);
    if (!res.verdict.stale) {
      res.outcome = AcquireResult::held;
      res.holder = std::move(held);
      return res;
    }
    // dated again: the wait for the folder's flock may have been long
    mine = new_lock_record(req.session, req.owner, current_epoch());
    session.stamp(mine, current_epoch());
    if (!store.replace(held, mine)) continue;  // changed or deleted meanwhile
    res.outcome = AcquireResult::took_over;
    res.record = std::move(mine);
    return res;
  }
}
// The pause between two attempts; false when a signal interrupted it.
// With a watch, the pause ends at the first change at the lock's name.
bool pause_until_change(const AcquireRequest& req, LockWatch* watch, double nap) {
  if (!watch || !watch->active()) return req.pause ? req.pause(nap) : (sleep_seconds(nap), true);
  if (!req.pause) {
    watch->wait(nap);
    return true;
  }
  // the caller holds signals (a COMMAND waits) and looks at them with
  // req.pause: between slices of the watch's wait, so that a signal ends
  // the wait within a slice
  constexpr double slice = 0.05;
  for (const double end = monotonic_seconds() + nap;;) {
    const double left = end - monotonic_seconds();
    const bool changed = watch->wait(std::min(left, slice));
    if (!req.pause(0)) return false;
    if (changed || left <= slice) return true;
  }
}
}  // namespace

// No lock operation resolves symlinks: a lock file reached through a link
// (planted in a shared folder, say) is refused by read_lock_file with exit 4,
// and link(), rename() and unlink() act on the name itself, never its target.
AcquireResult acquire_lock(LockStore& store, const AcquireRequest& req) {
  std::unique_ptr<LockSession> session = store.session(req.owner);
  const double deadline = monotonic_seconds() + req.wait_seconds;
  // Jittered exponential backoff, so waiters spread out instead of
  // stampeding the folder's flock at the same instants; seeded at the first
  // pause (most calls never pause).
  std::optional<std::minstd_rand> jitter;
  double backoff = 0.01;
  // Opened at the first failed attempt of a waiter. Disarmed before each
  // attempt and armed again after one that failed: an attempt made unarmed
  // is followed by one more, armed, so that a release between an attempt
  // and its pause is an event waiting to be read, not a wake-up lost.
  std::unique_ptr<LockWatch> watch;
  bool just_armed = false;
  std::unique_ptr<WaitLine> ticket;  // in line from the first pause on
  AcquireResult res;
  for (;;) {
    // out of turn, a waiter does not try, unless its time is up: then it
    // leaves the line first, and its last attempt is made out of line
    if (ticket && deadline - monotonic_seconds() <= 0) ticket.reset();
    if (!ticket || ticket->my_turn([&] { return store.read().state == LockFile::missing; })) {
      // a change seen since the watch was armed (a release, most likely):
      // this attempt may take the lock, so it is made unwatched too, and a
      // failed one arms the watch again
      if (just_armed && watch->wait(0)) just_armed = false;
      if (watch && !just_armed) watch->disarm();
      res = try_acquire(store, *session, req, ticket.get());
      const bool time_up = deadline - monotonic_seconds() <= 0;
      if (time_up && res.outcome == AcquireResult::held && res.holder.state == LockFile::missing)
        continue;  // refused by the line: one more attempt, out of line
      if (res.outcome != AcquireResult::held || time_up) {
        if (res.outcome == AcquireResult::held) session->abandon();
        else res.session = std::move(session);
        return res;
      }
      if (req.wait_seconds > 0 && !just_armed) {
        if (!watch) watch = open_lock_watch(store);
        just_armed = watch && watch->rearm();
        if (just_armed) continue;
      }
    }
    just_armed = false;
    if (!ticket && req.wait_seconds > 0) ticket = join_wait_line(store);
    if (!jitter)
      jitter.emplace(static_cast<unsigned>(getpid()) ^
                     static_cast<unsigned>(static_cast<uint64_t>(monotonic_seconds() * 1e6)));
    const double left = deadline - monotonic_seconds();
    double nap = backoff * (0.5 + static_cast<double>((*jitter)() % 1000) / 1000.0);
    nap = std::min(left, watch ? watch->pause(nap) : nap);
    if (!pause_until_change(req, watch.get(), nap)) {
      session->abandon();
      res.outcome = AcquireResult::interrupted;
      return res;
    }
    session->waited();
    backoff = std::min(backoff * 2, 0.5);
  }
}

AcquireResult acquire_lock(const std::string& path, const AcquireRequest& req) {
  make_dirs(dir_name(path));
  return acquire_lock(*file_lock_store(path), req);
}

// Read once, while held: a beat is nearly always of a lock that is ours,
// which would need holding and a second look anyway.
RefreshResult refresh_heartbeat(LockStore& store, const Owner& owner, int64_t now, std::optional<double> every) {
  RefreshResult res;
  Fd held_still = store.hold();
  res.holder = store.read();
  if (res.holder.state == LockFile::missing) return res;
  if (!is_ours(res.holder, owner)) {
    res.outcome = RefreshResult::not_ours;
    return res;
  }
  auto written = store.session(owner)->beat(res.holder, now, every);
  if (!written) {
    res.holder = LockEntry{};  // deleted since it was read: missing
    return res;
  }
  res.outcome = RefreshResult::refreshed;
  res.started_at = record_string(*written, "started_at");
  return res;
}

RefreshResult refresh_heartbeat(const std::string& path, const Owner& owner, int64_t now, std::optional<double> every) {
  return refresh_heartbeat(*file_lock_store(path), owner, now, every);
}

double beat_budget_left(const LockStore& store, double confirmed_sent, double now, double margin) {
  double limit = store.outage_limit();
  if (limit <= 0) return std::numeric_limits<double>::infinity();
  return confirmed_sent + limit - margin - now;
}

namespace {
// One beat of keep_heartbeat; an outage the store tolerates is said and
// counts as a beat, for the next to try again, while the beat policy
// allows (confirmed_sent: when the last beat the store confirmed was sent).
RefreshResult beat_once(LockStore& store, const Owner& owner, double every, const std::string* taken_at,
                        double& confirmed_sent) {
  const double sent = monotonic_seconds();
  try {
    RefreshResult r = refresh_heartbeat(store, owner, current_epoch(), every);
    if (r.outcome == RefreshResult::refreshed) confirmed_sent = sent;
    return r;
  } catch (const Error& e) {
    if (!store.tolerates_outage() || !taken_at) throw;
    if (beat_budget_left(store, confirmed_sent, monotonic_seconds()) <= 0) throw;
    warn(e.what());
    RefreshResult r;
    r.outcome = RefreshResult::refreshed;
    r.started_at = *taken_at;
    return r;
  }
}
}  // namespace

LockStore::Pause LockStore::pause_between_beats(const Owner& owner, double seconds) {
  return wait_for_exit(owner.pid, seconds) ? Pause::owner_exited : Pause::time_up;
}

namespace {
// Until the next beat is due (false) or the owner exited (true). A change
// of the lock that leaves it ours (another beater of the same owner) goes
// on waiting; one that does not (a release, a takeover) is for the beat,
// at once, to tell apart.
bool owner_exited_before_beat(LockStore& store, const Owner& owner, double every) {
  const double end = monotonic_seconds() + every;
  for (;;) {
    const double left = end - monotonic_seconds();
    if (left <= 0 || termination_signal()) return false;
    switch (store.pause_between_beats(owner, left)) {
      case LockStore::Pause::owner_exited: return true;
      case LockStore::Pause::time_up: break;
      case LockStore::Pause::changed: {
        LockEntry now = store.read();
        if (now.state != LockFile::readable || !is_ours(now, owner)) return false;
        break;
      }
    }
  }
}
}  // namespace

RefreshResult keep_heartbeat(LockStore& store, const Owner& owner, double every) {
  std::optional<std::string> taken_at;  // started_at of the lock last refreshed
  double confirmed_sent = monotonic_seconds();
  for (;;) {
    RefreshResult r = beat_once(store, owner, every, taken_at ? &*taken_at : nullptr, confirmed_sent);
    if (r.outcome == RefreshResult::refreshed) {
      taken_at = r.started_at;
    } else if (taken_at && store.was_released(owner, *taken_at, r.outcome == RefreshResult::missing)) {
      r.outcome = RefreshResult::released;
      return r;
    }
    if (r.outcome != RefreshResult::refreshed || termination_signal() ||
        owner_exited_before_beat(store, owner, every) || termination_signal() ||
        !is_same_process_alive(owner.pid, owner.start)) {
      // ended by its owner's exit or a signal, not by a beat: a release made
      // since the last beat left its mark for this beater, which takes it
      if (r.outcome == RefreshResult::refreshed && store.was_released(owner, *taken_at, false))
        r.outcome = RefreshResult::released;
      return r;
    }
  }
}

RefreshResult keep_heartbeat(const std::string& path, const Owner& owner, double every) {
  return keep_heartbeat(*file_lock_store(path), owner, every);
}

// Only an entry looked at while held goes, forced too.
// Read once, while held, as a release is nearly always of a lock that is ours.
Released release_lock(LockStore& store, const Owner& owner, bool force, bool mark_released) {
  for (;;) {
    Fd held_still = store.hold();
    LockEntry lock = store.read();
    if (lock.state == LockFile::missing) return Released::missing;
    if (!force && !is_ours(lock, owner)) return Released::not_ours;
    if (mark_released && is_ours(lock, owner)) store.mark_released(lock);
    if (store.remove_held(lock, held_still)) return Released::removed;
  }
}

Released release_lock(const std::string& path, const Owner& owner, bool force, bool mark_released) {
  return release_lock(*file_lock_store(path), owner, force, mark_released);
}

void release_got(LockStore& store, LockSession& session, const Owner& owner) {
  if (!session.release_own()) release_lock(store, owner, false);
}

namespace {
ReapResult judge_for_reaping(LockStore& store, const LockEntry& seen, const StalePolicy& policy) {
  ReapResult res;
  res.lock = seen;
  if (res.lock.state == LockFile::missing) return res;
  res.verdict = store.judge(res.lock, policy);
  // An unreadable file may be another tool's lock caught half-written: it
  // goes only once unchanged (by mtime) for longer than stale_after, which
  // judge_lock counts for it only when the caller gave one.
  if (res.lock.state == LockFile::unreadable && !res.verdict.stale) {
    res.outcome = ReapResult::unreadable;
    return res;
  }
  res.outcome = res.verdict.stale ? ReapResult::stale : ReapResult::live;
  return res;
}
}  // namespace

ReapResult reap_listed(LockStore& store, const LockEntry& seen, const StalePolicy& policy, bool dry_run) {
  // The first look is without holding, cheap for the many live locks; a
  // stale verdict is reached again while holding before anything goes.
  ReapResult res = judge_for_reaping(store, seen, policy);
  if (res.outcome != ReapResult::stale || dry_run) return res;
  if (!store.judges_again_when_held()) {
    // an error ends the sweep: a store out of reach would fail every key
    res.outcome = store.remove(res.lock) ? ReapResult::removed : ReapResult::missing;
    return res;
  }
  try {
    Fd held_still = store.hold();
    res = judge_for_reaping(store, store.read(), policy);
    if (res.outcome == ReapResult::stale)
      res.outcome = store.remove_held(res.lock, held_still) ? ReapResult::removed : ReapResult::missing;
  } catch (const Error& e) {
    res.outcome = ReapResult::failed;
    res.error = e.what();
  }
  return res;
}

ReapResult reap_lock(LockStore& store, const StalePolicy& policy, bool dry_run) {
  return reap_listed(store, store.read(), policy, dry_run);
}

ReapResult reap_lock(const std::string& path, const StalePolicy& policy, bool dry_run, bool listed_regular) {
  return reap_lock(*file_lock_store(path, listed_regular), policy, dry_run);
}

}  // namespace loopkit
