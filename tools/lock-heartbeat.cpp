// lock-heartbeat: refresh a lock's heartbeat, once or until its owner dies.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "core/lock_etcd.hpp"
#include "sys/etcd_url.hpp"
#include "sys/clock.hpp"
#include "sys/interrupt.hpp"
#include "sys/proc.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-heartbeat", "refresh a lock's heartbeat, once or until its owner dies", "LOCKFILE"};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  std::optional<long long> pid;
  double every = 0;    // 0: once
  double timeout = 5;  // etcd URLs
};
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.integer("pid", "the owner process (default: the calling shell)", "PID", c.pid, 1, INT32_MAX)
      .number("every,heartbeat", "keep beating every SECONDS until the owner dies or the lock is lost", "SECONDS",
              c.every, 0.01)
      .etcd_timeout(c.timeout);
}

#if LOOPKIT_ETCD
// An etcd lock: the beat is a keep-alive of the key's lease; --every keeps
// it up while the owner lives, and ends (exit 0) when the lock is released
// or (exit 1) lost.
static int run_etcd(const std::string& file, const Config& c, const Owner& owner) {
  etcd::Target t = etcd::parse_etcd_url(file);
  if (t.is_folder) fail_usage(fmt::format("{}: a lock is one key, not a folder (the URL ends in '/')", file));
  etcd::Client client(t, c.timeout);
  int64_t lease = 0;
  RefreshResult r = etcdlock::refresh(client, t.key, owner, &lease);
  if (r.outcome != RefreshResult::refreshed)
    return cli::no(describe_not_ours(file, owner.pid, r.outcome == RefreshResult::missing ? nullptr : &r.holder));
  if (c.every <= 0) return 0;
  for (;;) {
    if (wait_for_exit(owner.pid, c.every) || !is_owner_running(owner) || termination_signal()) break;
    try {
      if (!etcdlock::keep_alive(client, lease)) {
        // a released lock is a clean end; a lost one is said
        etcdlock::LockKey k = etcdlock::read(client, t.key, false);
        if (k.lock.state == LockFile::missing) return 0;
        return cli::no(describe_not_ours(file, owner.pid, &k.lock));
      }
    } catch (const Error& e) {
      cli::warn(e.what());  // out of reach: the next beat tries again
    }
  }
  if (int sig = termination_signal()) return 128 + sig;
  return 0;
}
#endif

static int run(Config& c, const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  cli::need_etcd(a.operands);
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
#if LOOPKIT_ETCD
  if (etcd::is_etcd_url(file)) return run_etcd(file, c, owner);
#endif
  RefreshResult r =
      c.every > 0 ? keep_heartbeat(file, owner, c.every) : refresh_heartbeat(file, owner, current_epoch());
  if (int sig = termination_signal()) return 128 + sig;
  // --every: the owner's own lock-release is a clean end too
  if (r.outcome == RefreshResult::refreshed || r.outcome == RefreshResult::released) return 0;
  return cli::no(describe_not_ours(file, owner.pid, r.outcome == RefreshResult::missing ? nullptr : &r.holder));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
