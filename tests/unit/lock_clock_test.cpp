// Issue 22: one clock read at each decision about a lock, and ages that
// cannot overflow whatever a record holds.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "core/json/json.hpp"
#include "core/lock/lock.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "clock_seam.hpp"
#include "scratch.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;
using loopkit::testing::FixedClock;
using loopkit::testing::MovableClock;

namespace {
struct ScratchFolder : testing::Scratch {
  ScratchFolder() : testing::Scratch("lock-clock-test") {}
};

// a live process of ours that is not the test itself, killed at the end
struct OtherProcess {
  pid_t pid;
  OtherProcess() : pid(fork()) {
    if (pid == 0) {
      pause();
      _exit(0);
    }
  }
  ~OtherProcess() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

LockFile readable(const std::string& text, int64_t mtime = 0) {
  LockFile f;
  f.state = LockFile::readable;
  f.record = parse_lock_record(text, "t.lock");
  f.mtime = mtime;
  return f;
}

std::string remote_record(const std::string& heartbeat) {
  return loopkit::format(R"({{"session":"s","pid":1,"host":"elsewhere.invalid","heartbeat_epoch":{}}})", heartbeat);
}
}  // namespace

TEST_CASE("issue 22: a lock got after a wait is as young as the moment it was got", "[lock][clock]") {
  ScratchFolder d;
  MovableClock clock(d.path("clock"), 1736503530);
  const std::string f = d.path("a.lock");
  OtherProcess holder;
  AcquireRequest held_by{"a", owner_process(holder.pid), {}, 0, {}};
  REQUIRE(acquire_lock(f, held_by).outcome == AcquireResult::created);
  AcquireRequest me{"a", owner_process(getpid()), {}, 1e9, {}};
  int pauses = 0;
  // the wait lasts 4 s of the test's clock; then the holder releases
  me.pause = [&](double) {
    clock.advance(4);
    CHECK(release_lock(f, held_by.owner, false) == Released::removed);
    return ++pauses < 3;
  };
  AcquireResult got = acquire_lock(f, me);
  REQUIRE(got.outcome == AcquireResult::created);
  CHECK(pauses == 1);
  LockFile lock = read_lock_file(f);
  CHECK(lock.record.heartbeat_epoch == clock.now());
  CHECK(lock.record.fields.string("started_at") == iso8601_utc(clock.now()));
  // anyone with --stale-after 3 finds it live, and cannot take it
  Verdict v = judge_lock(lock, {3});
  CHECK_FALSE(v.stale);
  CHECK(v.age == 0);
  AcquireRequest rival{"a", owner_process(holder.pid), {3}, 0, {}};
  CHECK(acquire_lock(f, rival).outcome == AcquireResult::held);
}

TEST_CASE("issue 22: a waiter ages the holder's heartbeat by the clock of each attempt", "[lock][clock]") {
  ScratchFolder d;
  MovableClock clock(d.path("clock"), 1736503530);
  const std::string f = d.path("r.lock");
  d.write("r.lock", remote_record(std::to_string(clock.now())) + "\n");
  AcquireRequest me{"r", owner_process(getpid()), {3}, 1e9, {}};
  int pauses = 0;
  me.pause = [&](double) {
    clock.advance(2);
    return ++pauses < 10;  // a clock frozen at the start would wait for ever
  };
  AcquireResult got = acquire_lock(f, me);
  REQUIRE(got.outcome == AcquireResult::took_over);
  CHECK(pauses == 2);
  CHECK(got.verdict.reason == "no heartbeat for 4s (over 3s)");
  CHECK(read_lock_file(f).record.heartbeat_epoch == clock.now());
}

TEST_CASE("issue 22: LOOPKIT_NOW=@FILE is read at each reading of the clock", "[clock]") {
  ScratchFolder d;
  MovableClock clock(d.path("clock"), 100);
  CHECK(current_epoch() == 100);
  clock.set(max_epoch);
  CHECK(current_epoch() == max_epoch);
  CHECK_NOTHROW(check_clock_override());
  for (const char* bad : {"", "-1", "1.5", "253402300800", "x"}) {
    INFO(bad);
    d.write("clock", std::string(bad) + "\n");
    CHECK_THROWS_AS(current_epoch(), Error);
  }
  testing::ClockOverride missing("@" + d.path("none"));
  try {
    check_clock_override();
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::usage);
  }
}

TEST_CASE("issue 22: ages saturate instead of overflowing", "[clock]") {
  CHECK(age_between(10, 3) == 7);
  CHECK(age_between(3, 10) == -7);
  CHECK(age_between(0, INT64_MIN) == INT64_MAX);
  CHECK(age_between(INT64_MAX, -1) == INT64_MAX);
  CHECK(age_between(-2, INT64_MAX) == -INT64_MAX);
}

TEST_CASE("issue 22: a heartbeat that is no time is no heartbeat, never an ageless lock", "[lock][clock]") {
  FixedClock clock;
  // out of 0..max_epoch: read as no heartbeat at all
  for (const char* absurd : {"-9223372036854775808", "9223372036854775807", "-1", "1e300", "-1e300", "1.8e19",
                             "253402300800", "1736503530000", "\"-5\"", "\"99999999999999999\""}) {
    INFO(absurd);
    LockRecord r = parse_lock_record(remote_record(absurd), "t");
    CHECK_FALSE(r.heartbeat_epoch);
    CHECK_FALSE(r.has_heartbeat);
    // it ages from its file's mtime, like an unreadable file
    CHECK(judge_lock(readable(remote_record(absurd), clock.now - 1000), {}).stale);
    CHECK_FALSE(judge_lock(readable(remote_record(absurd), clock.now - 10), {}).stale);
  }
  // a fraction is dropped; quoted digits are read
  CHECK(parse_lock_record(remote_record("1736503529.9"), "t").heartbeat_epoch == 1736503529);
  CHECK(parse_lock_record(remote_record("\"1736503529\""), "t").heartbeat_epoch == 1736503529);
  // an ISO time before 1970 is no time either, and started_at stands in
  LockRecord before = parse_lock_record(
      R"({"pid":1,"host":"elsewhere.invalid","heartbeat":"1969-12-31T23:59:59Z","started_at":"2025-01-10T10:00:00Z"})",
      "t");
  CHECK(before.heartbeat_epoch == 1736503200);
  // an mtime of INT64_MIN ages without overflow
  LockFile ancient = readable(remote_record("null"), INT64_MIN);
  Verdict v = judge_lock(ancient, {});
  CHECK(v.stale);
  CHECK(v.age == INT64_MAX);
}

TEST_CASE("issue 22: a heartbeat from further ahead than the limit is stale", "[lock][clock]") {
  FixedClock clock;
  Verdict v = judge_lock(readable(remote_record(std::to_string(max_epoch))), {});
  CHECK(v.stale);
  CHECK(v.reason == loopkit::format("heartbeat {}s in the future (over 120s)", max_epoch - clock.now));
  // a clock a little ahead (skew within the limit) is still live
  CHECK_FALSE(judge_lock(readable(remote_record(std::to_string(clock.now + 60))), {}).stale);
  // a local live owner is judged by its process unless a limit is given
  std::string mine = loopkit::format(R"({{"pid":{},"heartbeat_epoch":{}}})", getpid(), max_epoch);
  CHECK_FALSE(judge_lock(readable(mine), {}).stale);
  CHECK(judge_lock(readable(mine), {60}).stale);
}

TEST_CASE("issue 22: a beater's pid out of range is no beater", "[lock]") {
  for (const char* beater : {"-2147483649", "2147483648", "9223372036854775807", "4194305.5", "1e19"}) {
    INFO(beater);
    auto r = parse_lock_record(loopkit::format(R"({{"pid":42,"heartbeat_pid":{}}})", beater), "t");
    if (r.heartbeat_pid) CHECK(*r.heartbeat_pid > 0);
  }
  CHECK_FALSE(parse_lock_record(R"({"pid":42,"heartbeat_pid":2147483648})", "t").heartbeat_pid);
  CHECK_FALSE(parse_lock_record(R"({"pid":42,"heartbeat_pid":-2147483649})", "t").heartbeat_pid);
}

// issue 24: lock_text writes a record's members back as they were read
// (numbers and escapes as written), and a fresh record as json::compact would
TEST_CASE("lock_text is the record's text and a newline, whatever the record holds", "[lock]") {
  for (const char* text :
       {R"({"session":"a\"b\\c\n\t\u0001\u007f é","pid":42,"host":"h","pid_start":18446744073709551615,"n":-7})",
        R"({"heartbeat_every":2.5,"big":1e300,"lit":1.50,"t":true,"f":false,"z":null,"a":[1,"x",{"k":[]}],"o":{}})",
        R"({})", R"({"":""})"}) {
    INFO(text);
    JsonMembers o = *parse_json_object(text, "t");
    CHECK(lock_text(o) == std::string(text) + "\n");
    CHECK(json::equal(json::parse(lock_text(o), "t"), json::parse(text, "t")));
  }
  JsonMembers fresh = new_lock_record("s\"x", Owner{123, 456}, 1736503200);
  CHECK(lock_text(fresh) == json::compact(json::parse(lock_text(fresh), "t")) + "\n");
}
