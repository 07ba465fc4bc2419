// The documents half of the storage interface (issue 22) and fenced writes
// (issue 26), on files: state-set's read-modify-write over the file store.
#include <catch2/catch.hpp>
#include <string>
#include <unistd.h>

#include "core/edit/assign.hpp"
#include "core/lock/lock.hpp"
#include "core/state/state.hpp"
#include "scratch.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

namespace {
Update one_edit(const std::string& file, const std::string& assignment) {
  Update u;
  u.file = file;
  u.edits = {parse_assignment(assignment)};
  u.sync = false;
  return u;
}

bool take(const std::string& lock, pid_t pid) {
  AcquireRequest req;
  req.session = "t";
  req.owner = owner_process(pid);
  AcquireResult r = acquire_lock(lock, req);
  return r.outcome == AcquireResult::created || r.outcome == AcquireResult::took_over;
}
}  // namespace

TEST_CASE("a fenced write lands while the lock is ours, and is 'lock lost' once it is not", "[state][fence]") {
  testing::Scratch d("fence-test");
  d.write("s.json", "{\"n\": 1}\n");
  const std::string lock = d.path("locks/a.lock");
  REQUIRE(take(lock, getpid()));
  Update u = one_edit(d.path("s.json"), "n+=1");
  u.fence = lock;
  u.fence_owner = getpid();
  UpdateResult r = update_state_file(u);
  CHECK(r.no.empty());
  CHECK(r.written);
  CHECK(d.read("s.json") == "{\"n\": 2}\n");

  REQUIRE(release_lock(lock, owner_process(getpid()), false) == Released::removed);
  r = update_state_file(u);
  CHECK(r.no == "'" + lock + "': lock lost");
  CHECK_FALSE(r.written);
  CHECK(d.read("s.json") == "{\"n\": 2}\n");
}

TEST_CASE("a lock another live process holds fences us out", "[state][fence]") {
  testing::Scratch d("fence-test");
  const std::string lock = d.path("a.lock");  // beside the missing s.json: one folder flock for both
  REQUIRE(take(lock, getppid()));
  Update u = one_edit(d.path("s.json"), "n:=1");
  u.fence = lock;
  u.fence_owner = getpid();
  CHECK(update_state_file(u).no == "'" + lock + "': lock lost");
  CHECK(d.read("s.json").empty());  // not created either
}

TEST_CASE("a fence in another store, or on standard input, is a usage error", "[state][fence]") {
  testing::Scratch d("fence-test");
  Update u = one_edit(d.path("s.json"), "n:=1");
  u.fence = "etcd://127.0.0.1:1/lock";
  u.fence_owner = getpid();
  CHECK_THROWS_AS(update_state_file(u), Error);
  u.file = "-";
  u.fence = d.path("a.lock");
  try {
    update_state_file(u);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::usage);
  }
}

TEST_CASE("--on-invalid backup is made by the commit: an edit that fails after the reset leaves no backup",
          "[state][backup]") {
  testing::Scratch d("backup-test");
  d.write("s.json", "{\"version\": 2}");
  Update u = one_edit(d.path("s.json"), "version.x:=1");  // through a number: exit 3
  u.requires_.push_back(parse_expectation("version:=1"));
  u.backup_invalid = true;
  CHECK_THROWS_AS(update_state_file(u), Error);
  CHECK(d.read("s.json") == "{\"version\": 2}");
  CHECK(access(d.path("s.json.backup").c_str(), F_OK) != 0);

  u.edits = {parse_assignment("status=ok")};
  std::string warned;
  u.on_warning = [&](const std::string& w) { warned = w; };
  UpdateResult r = update_state_file(u);
  CHECK(r.written);
  CHECK(d.read("s.json.backup") == "{\"version\": 2}");
  CHECK(warned.find("moved it to '" + d.path("s.json.backup") + "' and started again") != std::string::npos);
}
