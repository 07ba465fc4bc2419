// lock-status: say who holds session locks, and whether they are live or stale.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "core/lock_etcd.hpp"
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

#if LOOPKIT_ETCD
// An etcd URL: a key, or a folder (ending in '/') of keys; the lease is the
// heartbeat, so only a dead owner of this host makes a lock stale.
static int status_etcd(const std::string& url, const Config& c) {
  etcd::Target t = etcd::parse_etcd_url(url);
  etcd::Client client(t, c.timeout);
  int code = 0;
  for (const auto& [name, k] : etcdlock::read_operand(client, url, t, true)) {
    Verdict v = etcdlock::judge(k);
    if (!cli::quiet()) cli::out((c.json ? etcdlock::to_json(name, k, v) : etcdlock::describe(name, k, v)) + "\n");
    if (!t.is_folder && k.lock.state == LockFile::unreadable && !v.stale) code = static_cast<int>(Exit::data);
    else if (!t.is_folder && (k.lock.state == LockFile::missing || v.stale)) code = static_cast<int>(Exit::no);
  }
  return code;
}
#endif

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
#if LOOPKIT_ETCD
    else if (int code = status_etcd(operand, c)) etcd_code = code;
#endif
  }
  if (files.empty()) return etcd_code;
  if (int code = run_files(c, files)) return code;
  return etcd_code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
