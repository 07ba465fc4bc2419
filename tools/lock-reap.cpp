// lock-reap: remove stale session locks, for cron sweeps.

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
#include "sys/base/etcd_url.hpp"
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

// An etcd URL: expired leases free their keys by themselves; what is left
// to reap is the lock of a dead owner of this host, removed only if the key
// is still the one judged (its mod revision), its lease revoked.
static void reap_store(const std::string& url, const Config& c) {
  std::unique_ptr<LockStore> store = open_lock_store(url, {.timeout = c.timeout}, true);
  for (const auto& [name, e] : store->list(url, false)) {
    Verdict v = store->judge(e, c.policy);
    if (!v.stale) continue;
    if (!c.dry_run && !store->remove(e)) continue;  // changed meanwhile: not the one judged
    if (!c.dry_run) cli::change_made();             // removed: failing to say so is a warning
    if (c.json) cli::out(lock_json(name, e, v) + "\n");
    else
      cli::out(loopkit::format("{} {}: {}: {}\n", c.dry_run ? "would remove" : "removed", name,
                               describe_owner(e.record), v.reason));
  }
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing DIR or LOCKFILE");
  cli::need_etcd(a.operands);
  std::vector<std::string> operands;
  for (const auto& operand : a.operands) {
    if (!etcd::is_etcd_url(operand)) operands.push_back(operand);
    else reap_store(operand, c);
  }
  if (operands.empty()) return 0;
  int code = 0;
  // the file is kept either way
  const LockFiles named = lock_files_named(operands);
  const bool one = named.one;
  for (const auto& [file, listed_regular] : named.files) {
    ReapResult r;
    try {
      r = reap_lock(file, c.policy, c.dry_run, listed_regular);
    } catch (const Error& e) {
      if (one) {
        cli::say(std::string(e.what()) + "; kept");
        return static_cast<int>(Exit::system);
      }
      cli::warn(std::string(e.what()) + "; kept");
      continue;
    }
    switch (r.outcome) {
      case ReapResult::unreadable:
        if (!cli::quiet()) cli::warn(loopkit::format("{}: {}; kept", quoted(file), r.lock.problem));
        break;
      case ReapResult::failed:
        cli::say(r.error);
        code = static_cast<int>(Exit::system);
        break;
      case ReapResult::stale:
      case ReapResult::removed:
        if (r.outcome == ReapResult::removed) cli::change_made();  // failing to say so is a warning
        if (c.json) {
          cli::out(lock_json(file, r.lock, r.verdict) + "\n");
        } else {
          // an unreadable file names no owner: its problem stands in
          cli::out((c.dry_run ? "would remove " : "removed ") + file + ": " +
                   (r.lock.state == LockFile::unreadable ? r.lock.problem : describe_owner(r.lock.record)) + ": " +
                   r.verdict.reason + "\n");
        }
        break;
      default:  // live, or gone meanwhile
        break;
    }
  }
  return code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
