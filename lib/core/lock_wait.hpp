// The wait of lock-acquire --wait between two attempts (lock.cpp): a file
// lock's waiter wakes at the first change at the lock's name instead of at
// its next poll (issue 24: a released lock handed over in about a
// millisecond, as flock(1) does), and still polls at the backoff's pace for
// changes that bring no event (NFS, other hosts).
#pragma once
#include <memory>

#include "core/storage.hpp"
#include "sys/watch.hpp"

namespace loopkit {

// A watch on the lock's name for a file store (lock_files.cpp); nullptr
// for any other store, whose waiter polls.
std::unique_ptr<NameWatch> watch_lock(const LockStore& store);

}  // namespace loopkit
