// lib/sys/fs/watch: the wait of lock-acquire --wait for a change at one name
// (issue 24). Every change is made before the wait, so that no result
// depends on timing: a queued event ends the wait at once.
#include <catch2/catch.hpp>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/fs/watch.hpp"
#include "scratch.hpp"

using namespace loopkit;

TEST_CASE("a watch sees its name created, replaced and removed, and nothing else", "[watch]") {
  testing::Scratch d("sys-watch-test");
  NameWatch w(d.path("."), "a.lock");
  CHECK_FALSE(w.armed());
  d.write("a.lock", "0");  // before arming: not a change it sees
  REQUIRE(w.arm());
  CHECK(w.armed());
  CHECK_FALSE(w.wait(0));
  d.write("other", "x");  // another name: no change of ours
  CHECK_FALSE(w.wait(0.01));
  d.write("a.lock", "1");
  CHECK(w.wait(60));
  CHECK_FALSE(w.wait(0));  // the events were read with it
  d.write("tmp", "2");
  REQUIRE(std::rename(d.path("tmp").c_str(), d.path("a.lock").c_str()) == 0);
  CHECK(w.wait(60));
  REQUIRE(unlink(d.path("a.lock").c_str()) == 0);
  CHECK(w.wait(60));
}

TEST_CASE("a disarmed watch waits for nothing, and armed again sees only what comes after", "[watch]") {
  testing::Scratch d("sys-watch-test");
  NameWatch w(d.path("."), "a.lock");
  REQUIRE(w.arm());
  d.write("a.lock", "1");  // queued, then dropped with the watch
  w.disarm();
  CHECK_FALSE(w.armed());
  CHECK_FALSE(w.wait(60));  // at once: not armed
  REQUIRE(w.arm());
  CHECK_FALSE(w.wait(0));  // neither the old change nor the old watch's end
  REQUIRE(unlink(d.path("a.lock").c_str()) == 0);
  CHECK(w.wait(60));
}

TEST_CASE("a watch whose folder goes wakes its waiter and is no longer armed", "[watch]") {
  testing::Scratch d("sys-watch-test");
  REQUIRE(mkdir(d.path("sub").c_str(), 0755) == 0);
  NameWatch w(d.path("sub"), "a.lock");
  REQUIRE(w.arm());
  REQUIRE(rmdir(d.path("sub").c_str()) == 0);
  CHECK(w.wait(60));
  CHECK_FALSE(w.armed());
  CHECK_FALSE(w.arm());  // nothing to watch any more
}

TEST_CASE("a watch on a folder that is not there never arms and never waits", "[watch]") {
  testing::Scratch d("sys-watch-test");
  NameWatch w(d.path("missing"), "a.lock");
  CHECK_FALSE(w.arm());
  CHECK_FALSE(w.armed());
  CHECK_FALSE(w.wait(60));
}
