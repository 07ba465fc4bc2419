// Issue 22: the lock operations written once over the storage interface
// (core/lock/store.hpp); the file store here, the etcd store in
// tests/lock-etcd.bats against a real etcd.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "core/lock/lock.hpp"
#include "core/lock/store.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "clock_seam.hpp"
#include "scratch.hpp"

using namespace loopkit;
using loopkit::testing::FixedClock;

TEST_CASE("issue 22: acquire, refresh, release and reap over one store", "[lock][storage]") {
  testing::Scratch d("lock-store-test");
  FixedClock clock;
  std::unique_ptr<LockStore> store = open_lock_store(d.path("a.lock"), {});
  Owner me = owner_process(getpid());
  AcquireRequest req{"a", me, {}, 0, {}};
  AcquireResult got = acquire_lock(*store, req);
  REQUIRE(got.outcome == AcquireResult::created);
  REQUIRE(got.session);
  CHECK(got.session->revision() == 0);  // files have no fencing token
  LockEntry e = store->read();
  CHECK(e.record.pid == getpid());
  CHECK(e.record.heartbeat_epoch == clock.now);
  // create if absent: never over an entry
  CHECK_FALSE(store->create(e.record.fields));
  CHECK(acquire_lock(*store, req).outcome == AcquireResult::refreshed);
  CHECK(refresh_heartbeat(*store, me, clock.now, 5.0).outcome == RefreshResult::refreshed);
  CHECK(store->read().record.heartbeat_every == 5.0);
  // replace and remove act only on the entry read
  {
    Fd held = store->hold();
    LockEntry seen = store->read();
    CHECK(store->remove(seen));
    CHECK_FALSE(store->remove(seen));
    CHECK_FALSE(store->replace(seen, seen.record.fields));  // gone: not brought back
  }
  CHECK(store->read().state == LockFile::missing);
  CHECK(release_lock(*store, me, false) == Released::missing);
  CHECK(reap_lock(*store, {}, false).outcome == ReapResult::missing);
  // the listing of one lock is itself
  auto named = store->list(d.path("a.lock"), false);
  REQUIRE(named.size() == 1);
  CHECK(named[0].entry.state == LockFile::missing);
}

TEST_CASE("issue 22: an etcd URL without the etcd store linked in is exit 4", "[lock][storage]") {
  if (lock_store_on_etcd) return;  // (never in unit-tests)
  try {
    open_lock_store("etcd://127.0.0.1:1/k", {});
    FAIL("opened");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::system);
    CHECK(std::string(e.what()) == "'etcd://127.0.0.1:1/k': this program is built without the etcd client");
  }
}
