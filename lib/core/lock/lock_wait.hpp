// The wait of lock-acquire --wait between two attempts (lock.cpp): a waiter
// wakes at the first change of the lock instead of at its next poll (issue
// 24: a released lock handed over in about a millisecond, as flock(1) does).
// A file lock's watch is inotify on its folder, which misses changes that
// bring no event (NFS, other hosts): its waiter still polls at the
// backoff's pace. An etcd lock's watch is etcd's own on the key, from the
// revision the last attempt read (as `etcdctl lock` waits): it misses
// nothing, so its waiter stops polling until the watch breaks.
#pragma once
#include <memory>

#include "core/state/storage.hpp"
#include "sys/fs/watch.hpp"

namespace loopkit {

// What a waiter waits on between two attempts.
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

// A store with a watch of its own (etcd's, lock_etcd.cpp).
class WatchedLockStore {
public:
  virtual ~WatchedLockStore() = default;
  virtual std::unique_ptr<LockWatch> watch() = 0;
};

// A watch on the lock's name for a file store (lock_files.cpp); nullptr
// for any other store.
std::unique_ptr<NameWatch> watch_lock(const LockStore& store);

// A file lock's watch as a LockWatch.
class NameLockWatch : public LockWatch {
public:
  explicit NameLockWatch(std::unique_ptr<NameWatch> names) : names_(std::move(names)) {}
  bool active() const override { return names_->armed(); }
  // only after a change: a wait that timed out (a poll, for changes that
  // bring no event) most likely finds the lock still held, and its attempt
  // would only be made twice
  void disarm() override {
    if (changed_) names_->disarm();
  }
  bool rearm() override { return !names_->armed() && names_->arm(); }
  bool wait(double seconds) override { return changed_ = names_->wait(seconds); }

private:
  std::unique_ptr<NameWatch> names_;
  bool changed_ = false;
};

// The watch for a waiter on store; nullptr when it has none (it polls).
inline std::unique_ptr<LockWatch> open_lock_watch(LockStore& store) {
  if (auto* watched = dynamic_cast<WatchedLockStore*>(&store)) return watched->watch();
  std::unique_ptr<NameWatch> names = watch_lock(store);
  if (!names) return nullptr;
  return std::make_unique<NameLockWatch>(std::move(names));
}

}  // namespace loopkit
