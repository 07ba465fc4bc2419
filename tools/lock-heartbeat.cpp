// lock-heartbeat: refresh a lock's heartbeat, once or until its owner dies.

#include <algorithm>

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/time/clock.hpp"
#include "sys/time/clock_wall.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/interrupt.hpp"
#include "sys/proc/proc.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-heartbeat", "refresh a lock's heartbeat, once or until its owner dies", "LOCKFILE"};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  std::optional<long long> pid;
  double every = 0;    // 0: once
  double timeout = 5;  // etcd URLs
  long long ttl = StoreOptions{}.ttl;
  std::optional<double> confirmed_at;  // epoch seconds: when the last confirmed beat was sent
  double margin = 0;
};
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.integer("pid", "the owner process (default: the calling shell)", "PID", c.pid, 1, INT32_MAX)
      .number("every,heartbeat", "keep beating every SECONDS until the owner dies or the lock is lost", "SECONDS",
              c.every, 0.01)
      .integer("ttl", "for an etcd URL: the lease's TTL in SECONDS (default 60), for --confirmed-at", "SECONDS", c.ttl,
               2, INT32_MAX)
      .number("confirmed-at", "the beat policy: the epoch SECONDS the last confirmed beat was sent", "SECONDS",
              c.confirmed_at, 0, static_cast<double>(max_epoch))
      .number("margin", "with --confirmed-at: the lock is lost this long before the lease can run out", "SECONDS",
              c.margin, 0)
      .etcd_timeout(c.timeout);
}

// One beat under the beat policy (core/lock/lock.hpp): given no more time than
// the budget has left, and a lock whose budget is spent is lost (exit 1),
// whether or not the store can be reached to say so.
static int beat_within_budget(const std::string& file, const Config& c, const Owner& owner) {
  auto lost = [&] {
    return cli::no(loopkit::format("lost {}: no beat confirmed for the lease's {}s (less --margin {}s)", quoted(file),
                                   c.ttl, c.margin));
  };
  std::unique_ptr<LockStore> probe = open_lock_store(file, {.timeout = c.timeout, .ttl = c.ttl});
  double left = beat_budget_left(*probe, *c.confirmed_at, wall_seconds(), c.margin);
  if (left <= 0) return lost();
  std::unique_ptr<LockStore> store = open_lock_store(file, {.timeout = std::min(c.timeout, left), .ttl = c.ttl});
  try {
    RefreshResult r = refresh_heartbeat(*store, owner, current_epoch());
    if (r.outcome == RefreshResult::refreshed) return 0;
    return cli::no(describe_not_ours(file, owner.pid, r.outcome == RefreshResult::missing ? nullptr : &r.holder));
  } catch (const Error&) {
    if (store->tolerates_outage() && beat_budget_left(*store, *c.confirmed_at, wall_seconds(), c.margin) <= 0)
      return lost();
    throw;
  }
}

static int run(Config& c, const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  cli::need_etcd(a.operands);
  const std::string& file = lock_operand(a.operands[0]);
  const pid_t pid = cli::owner_pid(c.pid);
  // A dead owner's lock is stale; beating it would keep it falsely alive.
  std::optional<Owner> running = running_owner(pid);
  if (!running) {
    if (c.every > 0) return 0;
    return cli::no(loopkit::format("cannot refresh {}: pid {} is not running", quoted(file), pid));
  }
  const Owner owner = *running;
  // --every is stopped with SIGTERM by engines: it finishes the beat in
  // hand (a beat killed half-way would leave .LOCK.tmp behind) and exits
  // 128+signal, as the signal's default action would have
  if (c.every > 0) catch_termination_signals();
  // on etcd the beat is a keep-alive of the key's lease
  std::unique_ptr<LockStore> store = open_lock_store(file, {.timeout = c.timeout, .ttl = c.ttl});
  if (c.confirmed_at && c.every <= 0) return beat_within_budget(file, c, owner);
  RefreshResult r =
      c.every > 0 ? keep_heartbeat(*store, owner, c.every) : refresh_heartbeat(*store, owner, current_epoch());
  if (int sig = termination_signal()) return 128 + sig;
  // --every: the owner's own lock-release is a clean end too
  if (r.outcome == RefreshResult::refreshed || r.outcome == RefreshResult::released) return 0;
  return cli::no(describe_not_ours(file, owner.pid, r.outcome == RefreshResult::missing ? nullptr : &r.holder));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
