// lock-acquire: take a session lock, or hold it while a command runs.
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <unistd.h>

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/time/clock.hpp"
#include "sys/fs/folder.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/spawn.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-acquire", "take a session lock, or hold it while a command runs",
                           "LOCKFILE [-- COMMAND...]", true};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  std::optional<long long> pid;
  std::optional<std::string> session;
  AcquireRequest request;
  double heartbeat = 30;
  long long conflict_exit = 1;
  bool json = false;
  bool verbose = false;
  long long ttl = StoreOptions{}.ttl;  // etcd URLs
  double timeout = 5;
  bool no_keeper = false;
};
}  // namespace

// SECONDS, or "inf"/"infinity" (any case, as strtod spells it): wait forever
static void set_wait(double& field, const std::string& text) {
  std::string lower;
  for (char ch : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  field =
      lower == "inf" || lower == "infinity" ? std::numeric_limits<double>::infinity() : cli::number(text, "--wait", 0);
}

static void options(cli::Options& o, Config& c) {
  o.integer("pid", "the owner process (default: the calling shell)", "PID", c.pid, 1, INT32_MAX)
      .optional("w,wait", "retry until SECONDS have passed (inf, or --wait alone: forever)", "SECONDS", "inf",
                cli::looks_like_number, [&c](const std::string& t) { set_wait(c.request.wait_seconds, t); })
      .text("session", "session name (default: the file name without .lock)", "NAME", c.session)
      .number("stale-after", "a lock without a heartbeat for SECONDS is stale", "SECONDS", c.request.policy.stale_after,
              0)
      .number("heartbeat,every", "with COMMAND: refresh the lock every SECONDS (default 30)", "SECONDS", c.heartbeat,
              0.01)
      .integer("E,conflict-exit-code", "exit N when the lock is held (default 1)", "N", c.conflict_exit, 0, 255)
      .flag("v,verbose", "say on stderr when the lock was got, and after how long", c.verbose)
      .flag("j,json", "print the record written, or the holder's when held", c.json)
      .integer("ttl", "for an etcd URL: the lease's TTL in SECONDS (default 60, at least 2)", "SECONDS", c.ttl, 2,
               INT32_MAX)
      .etcd_timeout(c.timeout)
      .flag("no-keeper", "for an etcd URL without COMMAND: leave the lease to lock-heartbeat --every", c.no_keeper);
}

// Held (at once or when --wait ran out): the holder on stdout with --json,
// as lock-status --json prints it, and the -E status.
static int refuse(const std::string& file, const Config& c, LockStore& store, const AcquireResult& r) {
  if (c.json) cli::out(store.to_json(file, r.holder, r.verdict) + "\n");
  std::string within = c.request.wait_seconds > 0 ? loopkit::format(" within {}s", c.request.wait_seconds) : "";
  cli::no(loopkit::format("cannot acquire {}{}: {}", quoted(file), within, describe_holder(r.holder)));
  return static_cast<int>(c.conflict_exit);
}

// The lock tools' rule (loopkit(7), COMMIT POINT): a lock got whose record
// cannot be printed is given up again, and the exit is 4 with the lock as it
// was (one that was ours already stays ours).
static void report_got(const std::string& file, const Config& c, LockStore& store, AcquireResult& r, double started) {
  if (c.json) {
    cli::out(r.record.json() + "\n");
    try {
      cli::flush_out();
    } catch (const Error&) {
      try {
        if (r.outcome != AcquireResult::refreshed) release_got(store, *r.session, c.request.owner);
      } catch (const Error& e) {
        cli::warn(e.what());
      }
      throw;
    }
  }
  if (!c.verbose) return;
  std::string how = r.outcome == AcquireResult::took_over   ? "took over a stale lock: " + r.verdict.reason
                    : r.outcome == AcquireResult::refreshed ? "already ours, heartbeat refreshed"
                                                            : "created";
  cli::say(loopkit::format("got {} after {:.3f}s: {}", quoted(file), monotonic_seconds() - started, how));
}

namespace {
// The beats while COMMAND runs. A lock lost is said once; where a lost
// lock may be taken at once (etcd), COMMAND is ended too, and so is a lock
// that could not be beaten for longer than the store allows.
struct Beater {
  const std::string& file;
  LockStore& store;
  const Config& c;
  bool lost = false;
  double confirmed_sent = monotonic_seconds();  // when the last beat the store confirmed was sent

  void lose(const std::string& why) {
    if (lost) return;
    lost = true;
    if (store.lost_ends_command()) terminate_child();
    else cli::warn(loopkit::format("lost the lock {}: {}", quoted(file), why));
  }
  void operator()() {
    if (lost && store.lost_ends_command()) return;
    const double sent = monotonic_seconds();
    try {
      auto b = refresh_heartbeat(store, c.request.owner, current_epoch(), c.heartbeat);
      if (b.outcome == RefreshResult::refreshed) confirmed_sent = sent;
      else lose(b.outcome == RefreshResult::missing ? "it was removed" : describe_holder(b.holder));
    } catch (const Error& e) {
      // out of reach: tolerated as the beat policy says (core/lock/lock.hpp)
      if (beat_budget_left(store, confirmed_sent, monotonic_seconds()) <= 0) lose(e.what());
      else cli::warn(e.what());
    }
  }
};
}  // namespace

// Hold the lock while the command runs; every way out releases it.
static int run_command(const std::string& file, Config& c, LockStore& store, const std::vector<std::string>& command) {
  HeldSignals signals;
  c.request.pause = [&](double s) { return signals.pause(s) == 0; };
  const double started = monotonic_seconds();
  AcquireResult r;
  try {
    r = acquire_lock(store, c.request);
  } catch (const Error&) {
    // a signal ends the retries of a call to etcd out of reach: it ends the wait
    if (signals.pause(0)) return 128 + signals.received();
    throw;
  }
  if (r.outcome == AcquireResult::interrupted) return 128 + signals.received();
  if (r.outcome == AcquireResult::held) return refuse(file, c, store, r);
  report_got(file, c, store, r, started);
  // the fencing token (etcd): the revision of the write that got the lock
  if (int64_t rev = r.session->revision()) setenv("LOOPKIT_LOCK_REVISION", std::to_string(rev).c_str(), 1);
  Beater beat{file, store, c};
  auto release = [&] {
    try {
      release_got(store, *r.session, c.request.owner);
    } catch (const Error& e) {
      cli::warn(e.what());  // a lease runs out by itself
    }
  };
  ChildStatus st;
  try {
    st = run_child(command, store.beat_every(c.heartbeat), std::ref(beat));
  } catch (...) {
    release();
    throw;
  }
  if (beat.lost && store.lost_ends_command()) {
    cli::say(
        loopkit::format("lock lost: the lease of {} ran out; {} was sent SIGTERM", quoted(file), quoted(command[0])));
    return static_cast<int>(Exit::system);
  }
  release();
  if (st.exec_errno) cli::say(loopkit::format("cannot run {}: {}", quoted(command[0]), std::strerror(st.exec_errno)));
  return st.status;
}

static void check_operands(const Args& a) {
  if (a.operands.empty()) fail_usage("missing LOCKFILE");
  if (a.operands.size() == 1) return;
  if (!a.command.empty()) fail_usage("expected one LOCKFILE");
  // flock(1) takes "FILE COMMAND ARG..." without "--"; here it is required
  std::string words;
  for (size_t i = 1; i < a.operands.size(); ++i) words += " " + a.operands[i];
  fail_usage(loopkit::format("expected one LOCKFILE: to run a command, put '--' before it: {} {} --{}", info.name,
                             a.operands[0], words));
}

static int run(Config& c, const Args& a) {
  check_operands(a);
  cli::need_etcd(a.operands);
  const std::string& file = lock_operand(a.operands[0]);
  if (c.pid && !a.command.empty()) fail_usage("--pid cannot be given with a COMMAND: lock-acquire owns the lock");
  // with a COMMAND, lock-acquire itself lives as long as the command
  const pid_t pid = a.command.empty() ? cli::owner_pid(c.pid) : getpid();
  std::optional<Owner> owner = running_owner(pid);
  if (!owner) return cli::no(loopkit::format("cannot acquire {} for pid {}: it is not running", quoted(file), pid));
  c.request.owner = *owner;
  c.request.session = lock_session(file, c.session);
  if (!etcd::is_etcd_url(file)) make_dirs(dir_name(file));
  std::unique_ptr<LockStore> store =
      open_lock_store(file, {.timeout = c.timeout, .ttl = c.ttl, .wait = c.request.wait_seconds});
  if (!a.command.empty()) return run_command(file, c, *store, a.command);
  const double started = monotonic_seconds();
  AcquireResult r = acquire_lock(*store, c.request);
  if (r.outcome == AcquireResult::held) return refuse(file, c, *store, r);
  report_got(file, c, *store, r, started);
  // without COMMAND (etcd): a keeper keeps the lease alive while the owner lives
  if (!c.no_keeper && r.outcome != AcquireResult::refreshed) r.session->keep_in_background(c.request.owner);
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
