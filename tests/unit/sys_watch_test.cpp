// lib/sys/watch: the wait of lock-acquire --wait for a change at one name
// (issue 24). Every change is made before the wait, so that no result
// depends on timing: a queued event ends the wait at once.
#include <catch2/catch.hpp>
#include <cstdio>
#include <unistd.h>

#include "sys/watch.hpp"
#include "scratch.hpp"

using namespace loopkit;

TEST_CASE("a watch sees its name created, replaced and removed, and nothing else", "[watch]") {
  testing::Scratch d("sys-watch-test");
  NameWatch w(d.path("."), "a.lock");
  REQUIRE(w.active());
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

TEST_CASE("a watch on a folder that is not there is inactive and never waits", "[watch]") {
  testing::Scratch d("sys-watch-test");
  NameWatch w(d.path("missing"), "a.lock");
  CHECK_FALSE(w.active());
  CHECK_FALSE(w.wait(60));
}
