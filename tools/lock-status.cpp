// lock-status: say who holds session locks, and whether they are live or stale.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "sys/etcd_url.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-status", "say who holds session locks, and whether they are live or stale",
                           "LOCKFILE|DIR..."};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  StalePolicy policy;
  bool json = false;
  double timeout = 5;  // etcd URLs
};
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.flag("j,json", "one JSON object per lock: its fields plus file, state, reason, age", c.json)
      .number("stale-after", "a lock without a heartbeat for SECONDS is stale", "SECONDS", c.policy.stale_after, 0)
      .etcd_timeout(c.timeout);
}

// An etcd URL: a key, or a folder (ending in '/') of keys; the lease is the
// heartbeat, so only a dead owner of this host makes a lock stale.
static int status_store(const std::string& url, const Config& c) {
  std::unique_ptr<LockStore> store = open_lock_store(url, {.timeout = c.timeout}, true);
  const bool one = url.back() != '/';
  int code = 0;
  for (const auto& [name, e] : store->list(url, true)) {
    Verdict v = store->judge(e, c.policy);
    if (!cli::quiet()) cli::out((c.json ? store->to_json(name, e, v) : store->describe(name, e, v)) + "\n");
    if (one && e.state == LockFile::unreadable && !v.stale) code = static_cast<int>(Exit::data);
    else if (one && (e.state == LockFile::missing || v.stale)) code = static_cast<int>(Exit::no);
  }
  return code;
}

static int run_files(Config& c, const std::vector<std::string>& operands) {
  const bool one = names_one_lock(operands);
  int code = 0;
  for (const auto& file : lock_files_in(operands)) {
    LockFile lock;
    try {
      lock = read_lock_file(file);
    } catch (const Error& e) {
      if (one) throw;
      cli::warn(e.what());
      continue;
    }
    Verdict v = judge_lock(lock, c.policy);
    // -q: the exit status is the whole answer, as with grep -q
    if (!cli::quiet()) cli::out((c.json ? lock_json(file, lock, v) : describe_lock(file, lock, v)) + "\n");
    if (one && lock.state == LockFile::unreadable && !v.stale) code = static_cast<int>(Exit::data);
    else if (one && (lock.state == LockFile::missing || v.stale)) code = static_cast<int>(Exit::no);
  }
  return code;
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing LOCKFILE or DIR");
  cli::need_etcd(a.operands);
  std::vector<std::string> files;
  int etcd_code = 0;
  for (const auto& operand : a.operands) {
    if (!etcd::is_etcd_url(operand)) files.push_back(operand);
    else if (int code = status_store(operand, c)) etcd_code = code;
  }
  if (files.empty()) return etcd_code;
  if (int code = run_files(c, files)) return code;
  return etcd_code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
