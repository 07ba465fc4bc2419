// lock-reap: remove stale session locks, for cron sweeps.

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-reap", "remove stale session locks, for cron sweeps", "DIR|LOCKFILE..."};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  StalePolicy policy;
  bool dry_run = false;
  bool json = false;
  double timeout = 5;  // etcd URLs
};
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.flag("n,dry-run", "list the stale locks, remove none", c.dry_run)
      .flag("j,json", "one JSON object per lock: its fields plus file and reason", c.json)
      .number("stale-after", "a lock without a heartbeat for SECONDS is stale", "SECONDS", c.policy.stale_after, 0)
      .etcd_timeout(c.timeout);
}

// What reaping a lock says: the lock removed (or that would be), else
// nothing but an unreadable file's warning.
static void say_reaped(const Config& c, const ListedLock& l, const ReapResult& r) {
  if (r.outcome == ReapResult::unreadable) {
    // an unreadable etcd key is never stale: left unsaid, as it always was
    if (l.file && !cli::quiet()) cli::warn(loopkit::format("{}: {}; kept", quoted(l.name), r.lock.problem));
    return;
  }
  if (r.outcome != ReapResult::stale && r.outcome != ReapResult::removed) return;  // live, or gone meanwhile
  if (r.outcome == ReapResult::removed) cli::change_made();                        // failing to say so is a warning
  if (c.json) {
    cli::out(lock_json(l.name, r.lock, r.verdict) + "\n");
    return;
  }
  // an unreadable file names no owner: its problem stands in
  cli::out((c.dry_run ? "would remove " : "removed ") + l.name + ": " +
           (r.lock.state == LockFile::unreadable ? r.lock.problem : describe_owner(r.lock.record)) + ": " +
           r.verdict.reason + "\n");
}

// Every lock is judged, and a stale one removed only while it is still the
// one judged: a file's read again under its folder's flock, an etcd key's
// by its mod revision (its lease revoked). Expired leases free their keys
// by themselves: what is left there is the lock of a dead owner of this host.
static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing DIR or LOCKFILE");
  cli::need_etcd(a.operands);
  int code = 0;
  list_locks(a.operands, {.timeout = c.timeout}, [&](const ListedLock& l) {
    if (l.error) {
      const std::string why = std::string(l.error->what()) + "; kept";  // the file is kept either way
      if (!l.one) return cli::warn(why);
      cli::say(why);
      code = static_cast<int>(Exit::system);
      return;
    }
    ReapResult r = reap_listed(l.store, l.entry, c.policy, c.dry_run);
    if (r.outcome == ReapResult::failed) {
      cli::say(r.error);
      code = static_cast<int>(Exit::system);
    }
    say_reaped(c, l, r);
  });
  return code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
