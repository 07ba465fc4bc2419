// lock-heartbeat: refresh a lock's heartbeat, once or until its owner dies.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "sys/clock.hpp"
#include "sys/interrupt.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-heartbeat", "refresh a lock's heartbeat, once or until its owner dies", "LOCKFILE"};

struct Config {
  std::optional<long long> pid;
  double every = 0;  // 0: once
};

static void options(cli::Options& o, Config& c) {
  o.integer("pid", "the owner process (default: the calling shell)", "PID", c.pid, 1, INT32_MAX)
      .number("every,heartbeat", "keep beating every SECONDS until the owner dies or the lock is lost", "SECONDS",
              c.every, 0.01);
}

static int run(Config& c, const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  const std::string& file = lock_operand(a.operands[0]);
  Owner owner = owner_process(cli::owner_pid(c.pid));
  // A dead owner's lock is stale; beating it would keep it falsely alive.
  if (!is_owner_running(owner)) {
    if (c.every > 0) return 0;
    return cli::no(fmt::format("cannot refresh {}: pid {} is not running", quoted(file), owner.pid));
  }
  // --every is stopped with SIGTERM by engines: it finishes the beat in
  // hand (a beat killed half-way would leave .LOCK.tmp behind) and exits
  // 128+signal, as the signal's default action would have
  if (c.every > 0) catch_termination_signals();
  RefreshResult r =
      c.every > 0 ? keep_heartbeat(file, owner, c.every) : refresh_heartbeat(file, owner, current_epoch());
  if (int sig = termination_signal()) return 128 + sig;
  // --every: the owner's own lock-release is a clean end too
  if (r.outcome == RefreshResult::refreshed || r.outcome == RefreshResult::released) return 0;
  return cli::no(describe_not_ours(file, owner.pid, r.outcome == RefreshResult::missing ? nullptr : &r.holder));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
