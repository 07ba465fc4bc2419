// lib/core/lock: records, verdicts and the operations, in a scratch folder.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>
#include <utime.h>

#include "core/json/json.hpp"
#include "core/lock/lock.hpp"
#include "core/lock/lock_queue.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/proc.hpp"
#include "clock_seam.hpp"
#include "scratch.hpp"

using namespace loopkit;
using loopkit::testing::FixedClock;

namespace {
struct ScratchFolder : testing::Scratch {
  ScratchFolder() : testing::Scratch("lock-test") {}
};

pid_t dead_pid() {
  pid_t p = fork();
  if (p == 0) _exit(0);
  waitpid(p, nullptr, 0);
  return p;
}

LockFile readable(const std::string& text) {
  LockFile f;
  f.state = LockFile::readable;
  f.record = parse_lock_record(text, "t.lock");
  return f;
}

std::string record_text(pid_t pid, const std::string& extra) {
  return loopkit::format(R"({{"session":"s","pid":{},"started_at":"2025-01-10T10:00:00Z"{}}})", pid, extra);
}
}  // namespace

TEST_CASE("a full record is read field by field", "[lock]") {
  auto r = parse_lock_record(R"({"session":"auth","pid":12345,"host":"build-3","pid_start":8123456,
    "started_at":"2025-01-10T10:00:00Z","heartbeat":"2025-01-10T10:05:30Z","heartbeat_epoch":1736503530})",
                             "t.lock");
  CHECK(r.session == "auth");
  CHECK(r.pid == 12345);
  CHECK(r.host == "build-3");
  CHECK(r.pid_start == 8123456u);
  CHECK(r.heartbeat_epoch == 1736503530);
  CHECK_FALSE(r.bare_pid);
}

TEST_CASE("other tools' locks are understood", "[lock]") {
  SECTION("the seed's record without heartbeat ages from started_at") {
    auto r = parse_lock_record(R"({"session":"demo","pid":20995,"started_at":"2025-01-10T10:00:00Z"})", "t");
    CHECK(r.host.empty());
    CHECK_FALSE(r.pid_start);
    CHECK(r.heartbeat_epoch == 1736503200);
  }
  SECTION("a bare pid") {
    auto r = parse_lock_record("12345\n", "t");
    CHECK(r.bare_pid);
    CHECK(r.pid == 12345);
  }
  SECTION("a pid written as a string") { CHECK(parse_lock_record(R"({"pid":"42"})", "t").pid == 42); }
  SECTION("a beater's pid, only when it is one") {
    CHECK(parse_lock_record(R"({"pid":42,"heartbeat_pid":43})", "t").heartbeat_pid == 43);
    for (const char* beater : {"0", "-1", "2147483648", "1e300", "\"x\"", "null"})
      CHECK_FALSE(parse_lock_record(loopkit::format(R"({{"pid":42,"heartbeat_pid":{}}})", beater), "t").heartbeat_pid);
  }
  SECTION("numbers out of range are no time and no pid, never a wrapped one") {
    CHECK_FALSE(parse_lock_record(R"({"pid":42,"heartbeat_epoch":1e300})", "t").heartbeat_epoch);
    CHECK_FALSE(parse_lock_record(R"({"pid":42,"heartbeat_epoch":-1e300})", "t").heartbeat_epoch);
  }
}

TEST_CASE("what is not a lock record is bad data", "[lock]") {
  for (const char* text : {"", "  \n", "not json", "[1,2]", R"({"session":"s"})", R"({"pid":-3})", R"({"pid":"x"})",
                           R"({"pid":1e300})", R"({"pid":4294967338})"}) {
    INFO(text);
    try {
      parse_lock_record(text, "t.lock");
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::data);
    }
  }
}

TEST_CASE("local locks live and die with their process", "[lock]") {
  StalePolicy policy;
  SECTION("our own process is live") { CHECK_FALSE(judge_lock(readable(record_text(getpid(), "")), policy).stale); }
  SECTION("a dead pid is stale") {
    auto v = judge_lock(readable(record_text(dead_pid(), "")), policy);
    CHECK(v.stale);
    CHECK_THAT(v.reason, Catch::Contains("not running"));
  }
  SECTION("a live pid with another start time was reused") {
    auto start = *process_start_time(getpid());
    auto v = judge_lock(readable(record_text(getpid(), loopkit::format(R"(,"pid_start":{})", start + 1))), policy);
    CHECK(v.stale);
    CHECK_THAT(v.reason, Catch::Contains("another process"));
    CHECK_FALSE(
        judge_lock(readable(record_text(getpid(), loopkit::format(R"(,"pid_start":{})", start))), policy).stale);
  }
  SECTION("a lock from an earlier boot is stale") {
    if (boot_id().empty()) return;
    auto v =
        judge_lock(readable(record_text(getpid(), R"(,"boot_id":"00000000-0000-0000-0000-000000000000")")), policy);
    CHECK(v.stale);
  }
  SECTION("an old heartbeat matters only with stale_after") {
    FixedClock clock;
    auto text = record_text(getpid(), loopkit::format(R"(,"heartbeat_epoch":{})", clock.now - 1000));
    CHECK_FALSE(judge_lock(readable(text), policy).stale);
    policy.stale_after = 60;
    CHECK(judge_lock(readable(text), policy).stale);
  }
}

TEST_CASE("other hosts' locks go stale by heartbeat age", "[lock]") {
  FixedClock clock;
  auto at = [](int64_t age) {
    return readable(
        record_text(1, loopkit::format(R"(,"host":"elsewhere.invalid","heartbeat_epoch":{})", FixedClock::now - age)));
  };
  StalePolicy policy;
  CHECK_FALSE(judge_lock(at(10), policy).stale);
  CHECK(judge_lock(at(default_remote_stale_after + 1), policy).stale);
  policy.stale_after = 5000;
  CHECK_FALSE(judge_lock(at(1000), policy).stale);
}

TEST_CASE("ours means same pid, start time, host and boot", "[lock]") {
  Owner me = owner_process(getpid());
  auto rec = [](const std::string& extra) { return parse_lock_record(record_text(getpid(), extra), "t"); };
  CHECK(is_lock_ours(rec(""), me));
  CHECK(is_lock_ours(rec(loopkit::format(R"(,"pid_start":{})", *me.start)), me));
  CHECK_FALSE(is_lock_ours(rec(loopkit::format(R"(,"pid_start":{})", *me.start + 1)), me));
  CHECK_FALSE(is_lock_ours(rec(R"(,"host":"elsewhere.invalid")"), me));
  CHECK_FALSE(is_lock_ours(rec(""), owner_process(getppid())));
}

TEST_CASE("acquire creates, refreshes, refuses and takes over", "[lock]") {
  ScratchFolder d;
  const std::string f = d.path("sub/a.lock");
  AcquireRequest me{"a", owner_process(getpid()), {}, 0, {}};
  CHECK(acquire_lock(f, me).outcome == AcquireResult::created);
  CHECK(read_lock_file(f).record.session == "a");
  CHECK(acquire_lock(f, me).outcome == AcquireResult::refreshed);

  AcquireRequest parent{"a", owner_process(getppid()), {}, 0, {}};
  auto held = acquire_lock(f, parent);
  CHECK(held.outcome == AcquireResult::held);
  CHECK(held.holder.record.pid == getpid());

  d.write("sub/a.lock", record_text(dead_pid(), ""));
  auto took = acquire_lock(f, parent);
  CHECK(took.outcome == AcquireResult::took_over);
  CHECK_THAT(took.verdict.reason, Catch::Contains("not running"));
  CHECK(read_lock_file(f).record.pid == getppid());
}

TEST_CASE("an unreadable lock is held, unless unchanged past stale_after", "[lock]") {
  ScratchFolder d;
  d.write("j.lock", "garbage");
  AcquireRequest me{"j", owner_process(getpid()), {}, 0, {}};
  CHECK(acquire_lock(d.path("j.lock"), me).outcome == AcquireResult::held);
  CHECK(reap_lock(d.path("j.lock"), {}, false).outcome == ReapResult::unreadable);
  FixedClock clock;
  struct utimbuf old {
    clock.now - 1000, clock.now - 1000
  };
  utime(d.path("j.lock").c_str(), &old);
  CHECK(acquire_lock(d.path("j.lock"), me).outcome == AcquireResult::held);
  me.policy.stale_after = 60;
  CHECK(acquire_lock(d.path("j.lock"), me).outcome == AcquireResult::took_over);
}

TEST_CASE("an unreadable lock is reaped once unchanged past stale_after", "[lock]") {
  ScratchFolder d;
  d.write("e.lock", "");
  FixedClock clock;
  struct utimbuf old {
    clock.now - 1000, clock.now - 1000
  };
  utime(d.path("e.lock").c_str(), &old);
  CHECK(reap_lock(d.path("e.lock"), {}, false).outcome == ReapResult::unreadable);
  CHECK(reap_lock(d.path("e.lock"), {2000}, false).outcome == ReapResult::unreadable);
  ReapResult listed = reap_lock(d.path("e.lock"), {60}, true);
  CHECK(listed.outcome == ReapResult::stale);
  CHECK(listed.verdict.reason == "unreadable and unchanged for 1000s (over 60s)");
  CHECK(path_exists(d.path("e.lock")));
  CHECK(reap_lock(d.path("e.lock"), {60}, false).outcome == ReapResult::removed);
  CHECK_FALSE(path_exists(d.path("e.lock")));
}

TEST_CASE("heartbeat and release act only on our own lock", "[lock]") {
  ScratchFolder d;
  const std::string f = d.path("h.lock");
  Owner me = owner_process(getpid()), other = owner_process(getppid());
  CHECK(refresh_heartbeat(f, me, 100).outcome == RefreshResult::missing);
  CHECK(release_lock(f, me, false) == Released::missing);
  acquire_lock(f, {"h", me, {}, 0, {}});
  CHECK(refresh_heartbeat(f, other, 100).outcome == RefreshResult::not_ours);
  CHECK(refresh_heartbeat(f, me, 100).outcome == RefreshResult::refreshed);
  CHECK(read_lock_file(f).record.heartbeat_epoch == 100);
  CHECK(read_lock_file(f).record.fields.string("heartbeat") == "1970-01-01T00:01:40Z");
  CHECK(release_lock(f, other, false) == Released::not_ours);
  CHECK(release_lock(f, me, false) == Released::removed);
  CHECK_FALSE(path_exists(f));
  acquire_lock(f, {"h", me, {}, 0, {}});
  CHECK(release_lock(f, other, true) == Released::removed);
}

TEST_CASE("an owner's release of a beaten lock leaves the released mark, no other", "[lock]") {
  ScratchFolder d;
  const std::string f = d.path("m.lock"), mark = d.path(".m.lock.released");
  CHECK(released_mark_path(f) == mark);
  CHECK(released_mark_path("m.lock") == ".m.lock.released");
  Owner me = owner_process(getpid()), other = owner_process(getppid());
  // a lock beaten every 30 s by `beater`, as lock-heartbeat --every leaves it
  auto beaten = [&](pid_t beater) {
    acquire_lock(f, {"m", me, {}, 0, {}});
    refresh_heartbeat(f, me, 100, 30);
    std::string text = read_lock_file(f).text;
    const std::string own = loopkit::format("\"heartbeat_pid\":{}", getpid());
    REQUIRE(text.find(own) != std::string::npos);
    text.replace(text.find(own), own.size(), loopkit::format("\"heartbeat_pid\":{}", beater));
    d.write("m.lock", text);
    return text;
  };
  acquire_lock(f, {"m", me, {}, 0, {}});
  CHECK(release_lock(f, me, false, true) == Released::removed);
  CHECK_FALSE(path_exists(mark));  // no beater declared
  beaten(getpid());
  CHECK(release_lock(f, me, false, true) == Released::removed);
  CHECK_FALSE(path_exists(mark));  // the owner beating for itself
  beaten(getppid());
  CHECK(release_lock(f, other, true, true) == Released::removed);
  CHECK_FALSE(path_exists(mark));  // forced away by someone else
  beaten(getppid());
  CHECK(release_lock(f, me, false, false) == Released::removed);
  CHECK_FALSE(path_exists(mark));  // not asked for
  const std::string text = beaten(getppid());
  CHECK(release_lock(f, me, false, true) == Released::removed);
  CHECK(read_lock_file(mark).text == text);
}

TEST_CASE("reap removes stale locks only, and lists a folder's *.lock files", "[lock]") {
  ScratchFolder d;
  acquire_lock(d.path("live.lock"), {"live", owner_process(getpid()), {}, 0, {}});
  d.write("dead.lock", record_text(dead_pid(), ""));
  d.write("other.txt", "1");
  auto files = lock_files_in({d.dir});
  REQUIRE(files.size() == 2);
  CHECK(files[0] == d.path("dead.lock"));
  CHECK(reap_lock(files[0], {}, true).outcome == ReapResult::stale);
  CHECK(path_exists(files[0]));
  CHECK(reap_lock(files[0], {}, false).outcome == ReapResult::removed);
  CHECK_FALSE(path_exists(files[0]));
  CHECK(reap_lock(files[1], {}, false).outcome == ReapResult::live);
  CHECK(reap_lock(d.path("none.lock"), {}, false).outcome == ReapResult::missing);
}

TEST_CASE("status lines and JSON name the lock and its state", "[lock]") {
  LockFile none;
  CHECK(describe_lock("n.lock", none, {}) == "n.lock: free");
  CHECK(lock_json("n.lock", none, {}) == R"({"file":"n.lock","state":"free"})");
  auto live = readable(record_text(getpid(), ""));
  Verdict v = judge_lock(live, {});
  CHECK_THAT(describe_lock("l.lock", live, v), Catch::StartsWith("l.lock: live, session 's', pid "));
  CHECK_THAT(lock_json("l.lock", live, v), Catch::Contains(R"("file":"l.lock","state":"live")"));
  CHECK(session_of_path("a/b/auth.lock") == "auth");
  CHECK(session_of_path("plain") == "plain");
}

TEST_CASE("a lock file that is a symlink is refused by every operation, and nothing goes through it", "[lock]") {
  ScratchFolder d;
  d.write("target.txt", "precious\n");
  REQUIRE(symlink("target.txt", d.path("x.lock").c_str()) == 0);
  REQUIRE(symlink("elsewhere/t.lock", d.path("dangling.lock").c_str()) == 0);
  Owner me = owner_process(getpid());
  auto refused = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      CHECK(e.code() == Exit::system);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string link = "cannot open '" + d.path("x.lock") + "': is a symbolic link";
  CHECK(refused([&] { acquire_lock(d.path("x.lock"), {"x", me, {}, 0, {}}); }) == link);
  CHECK(refused([&] { refresh_heartbeat(d.path("x.lock"), me, 100); }) == link);
  CHECK(refused([&] { release_lock(d.path("x.lock"), me, true); }) == link);
  CHECK(refused([&] { reap_lock(d.path("x.lock"), {.stale_after = 0}, false); }) == link);
  CHECK(refused([&] {
          acquire_lock(d.path("dangling.lock"), {"d", me, {}, 0, {}});
        }) == "cannot open '" + d.path("dangling.lock") + "': is a symbolic link");
  std::ifstream in(d.path("target.txt"));
  std::string text;
  std::getline(in, text);
  CHECK(text == "precious");
  CHECK_FALSE(path_exists(d.path("elsewhere")));
  CHECK(path_exists(d.path("x.lock")));
}

TEST_CASE("a zombie owner's lock is stale, and taken over", "[lock]") {
  ScratchFolder d;
  pid_t z = fork();
  if (z == 0) _exit(0);
  for (int i = 0; i < 10000 && !is_zombie(z); ++i) usleep(1000);
  REQUIRE(is_zombie(z));
  d.write("z.lock", loopkit::format(R"({{"session":"z","pid":{},"pid_start":{}}})", z, *process_start_time(z)));
  Verdict v = judge_lock(read_lock_file(d.path("z.lock")), {});
  CHECK(v.stale);
  CHECK(v.reason == loopkit::format("pid {} has exited, a zombie not yet reaped", z));
  CHECK_FALSE(owner_process(z).start);
  CHECK(acquire_lock(d.path("z.lock"), {"z", owner_process(getpid()), {}, 0, {}}).outcome == AcquireResult::took_over);
  waitpid(z, nullptr, 0);
}

TEST_CASE("a lock file bigger than max_lock_bytes is unreadable, not read whole", "[lock]") {
  ScratchFolder d;
  d.write("big.lock", std::string(max_lock_bytes + 1, ' '));
  LockFile f = read_lock_file(d.path("big.lock"));
  CHECK(f.state == LockFile::unreadable);
  CHECK(f.problem == "larger than 65536 bytes: not a lock file");
  CHECK(f.text.size() == max_lock_bytes);
  CHECK(reap_lock(d.path("big.lock"), {}, false).outcome == ReapResult::unreadable);
  CHECK(path_exists(d.path("big.lock")));
}

TEST_CASE("a lock is taken or refreshed only for an owner that is running", "[lock]") {
  Owner me = owner_process(getpid());
  CHECK(is_owner_running(me));
  CHECK_FALSE(is_owner_running(owner_process(dead_pid())));
  if (me.start) {  // a pid given to another process since its start time was read
    Owner reused{me.pid, *me.start + 1};
    CHECK_FALSE(is_owner_running(reused));
  }
}

TEST_CASE("the lock tools' no: missing, or held by someone else", "[lock]") {
  CHECK(describe_not_ours("a.lock", 12, nullptr) == "no lock 'a.lock'");
  LockFile holder = readable(record_text(34, ""));
  CHECK(describe_not_ours("a.lock", 12, &holder).rfind("'a.lock' is not ours (pid 12): held by pid 34", 0) == 0);
}

TEST_CASE("one lock file named alone answers by the exit status; a folder or several sweep", "[lock]") {
  ScratchFolder d;
  d.write("a.lock", record_text(getpid(), ""));
  CHECK(names_one_lock({d.path("a.lock")}));
  CHECK(names_one_lock({d.path("missing.lock")}));
  CHECK_FALSE(names_one_lock({d.dir}));
  CHECK_FALSE(names_one_lock({d.path("a.lock"), d.path("b.lock")}));
}

TEST_CASE("lock_text writes what json::compact writes, whatever byte needs escaping at whatever offset", "[lock]") {
  // the word-at-a-time test of lock_text sees 8 bytes at once: every
  // escaped byte at every place in and across a word
  for (unsigned char c : {'"', '\\', '\n', '\x01', '\x1f', '\x7f', ' ', 'a', '\x80', '\xff'}) {
    for (std::size_t at = 0; at < 20; ++at) {
      std::string s(19, 'x');
      s.insert(at, 1, static_cast<char>(c));
      json::object o;
      o["session"] = s;
      o["pid"] = 42;
      o[s] = "k";
      JsonMembers f;
      f.set_string("session", s);
      f.set_integer("pid", 42);
      f.set_string(s, "k");
      INFO("byte " << static_cast<int>(c) << " at " << at);
      CHECK(lock_text(f) == json::compact(json::value(o)) + "\n");
    }
  }
}

TEST_CASE("an etcd ticket names its waiter's host, and only this host's gone waiters are told gone", "[lock]") {
  const std::string mine = waiter_text_with_host();
  CHECK(mine.back() == '\n');
  CHECK(mine.find(" " + host_name() + "\n") != std::string::npos);
  CHECK_FALSE(is_local_waiter_gone(mine));  // this process runs
  const std::string boot = boot_id().empty() ? "-" : boot_id();
  const pid_t gone = dead_pid();
  CHECK(is_local_waiter_gone(loopkit::format("{} - {} {}\n", gone, boot, host_name())));
  // the same pid, started at another time: a reused pid, the waiter gone
  const auto start = look_at_process(getpid()).start;
  if (start) CHECK(is_local_waiter_gone(loopkit::format("{} {} {} {}\n", getpid(), *start + 1, boot, host_name())));
  if (!boot_id().empty())  // from before this host's last boot
    CHECK(
        is_local_waiter_gone(loopkit::format("{} - 00000000-0000-0000-0000-000000000000 {}\n", getpid(), host_name())));
  // nobody here can tell: another host's, or an older loopkit's with no host
  CHECK_FALSE(is_local_waiter_gone(loopkit::format("{} - {} elsewhere.invalid\n", gone, boot)));
  CHECK_FALSE(is_local_waiter_gone(loopkit::format("{} 1\n", gone)));
  CHECK_FALSE(is_local_waiter_gone(""));
}
