// lib/sys/etcd/etcd_watch (a lock waiter's watch of its key) and the key as a
// failed put_if_unchanged saw it, against a real etcd started by
// tests/etcd/etcd-sandbox; hidden from the plain unit run, as the other
// [etcd] cases are.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include "scratch.hpp"
#include "sys/base/error.hpp"
#include "sys/etcd/etcd.hpp"
#include "sys/etcd/etcd_watch.hpp"

using namespace loopkit;
using namespace loopkit::etcd;

namespace {

// one etcd member on loopback, stopped by pid when this goes out of scope
struct WatchSandbox {
  testing::Scratch scratch{"etcd-watch-test"};
  std::string dir = scratch.dir + "/etcd", endpoints;
  WatchSandbox() {
    std::string command = script() + " start '" + dir + "' 1 " + std::to_string(getpid());
    FILE* p = popen(command.c_str(), "r");
    REQUIRE(p);
    char buf[256];
    while (fgets(buf, sizeof buf, p)) endpoints += buf;
    REQUIRE(pclose(p) == 0);
    while (!endpoints.empty() && endpoints.back() == '\n') endpoints.pop_back();
  }
  ~WatchSandbox() { stop(); }
  void stop() { (void)!std::system((script() + " stop '" + dir + "'").c_str()); }
  static std::string script() { return std::string("'") + LOOPKIT_SOURCE_DIR + "/tests/etcd/etcd-sandbox'"; }
};

}  // namespace

TEST_CASE("a key watch wakes at the key's changes from its revision on, and ends with its member", "[.etcd][etcd]") {
  WatchSandbox etcd;
  Client c(parse_etcd_url("etcd://" + etcd.endpoints + "/w"));
  const int64_t r1 = c.put("/w", "1");
  KeyWatch w(c, "/w", r1 + 1, 5);
  CHECK(w.wait(0.1) == 0);  // nothing yet
  c.put("/other", "x");
  CHECK(w.wait(0.1) == 0);  // another key's change
  const int64_t r2 = c.put("/w", "2");
  CHECK(w.wait(5) == r2);
  // from an earlier revision, the change since then comes at once
  KeyWatch replay(c, "/w", r1 + 1, 5);
  CHECK(replay.wait(5) == r2);

  // a failed create: its transaction shows the key as it is
  GuardedPut p;
  p.key = "/w";
  p.value = "3";
  RangeResult seen;
  p.seen_on_failure = &seen;
  CHECK_FALSE(c.put_if_unchanged(p));
  REQUIRE(seen.kvs.size() == 1);
  CHECK(seen.kvs[0].value == "2");
  CHECK(seen.kvs[0].mod_revision == r2);
  CHECK(seen.revision >= r2);

  etcd.stop();  // the member gone: the watch ends, exit 4
  CHECK_THROWS_AS(w.wait(5), Error);
}
