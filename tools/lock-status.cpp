// lock-status: say who holds session locks, and whether they are live or stale.

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-status", "say who holds session locks, and whether they are live or stale",
                           "LOCKFILE|DIR..."};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  StalePolicy policy;
  bool json = false;
  bool only_live = false, only_stale = false;  // --live, --stale: the locks listed, and the answer
  double timeout = 5;                          // etcd URLs
};

// Whether --live or --stale lists this lock (every lock without them)
bool listed(const Config& c, LockFile::State state, const Verdict& v) {
  if (c.only_live) return state == LockFile::readable && !v.stale;
  if (c.only_stale) return v.stale;
  return true;
}

// The exit status under --live or --stale, as grep's: 0 when a lock was
// listed, else 1; a single lock that is not a record stays bad data.
int filtered_code(int code, bool any_listed) {
  if (code == static_cast<int>(Exit::data)) return code;
  return any_listed ? 0 : static_cast<int>(Exit::no);
}
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.flag("j,json", "one JSON object per lock: its fields plus file, state, reason, age", c.json)
      .flag("live", "list only the locks held by a live owner; exit 0 if there is one", c.only_live)
      .flag("stale", "list only the stale locks; exit 0 if there is one", c.only_stale)
      .number("stale-after", "a lock without a heartbeat for SECONDS is stale", "SECONDS", c.policy.stale_after, 0)
      .etcd_timeout(c.timeout);
}

// An etcd URL: a key, or a folder (ending in '/') of keys; the lease is the
// heartbeat, so only a dead owner of this host makes a lock stale.
static int status_store(const std::string& url, const Config& c, bool& any) {
  std::unique_ptr<LockStore> store = open_lock_store(url, {.timeout = c.timeout}, true);
  const bool one = url.back() != '/';
  int code = 0;
  for (const auto& [name, e] : store->list(url, true)) {
    Verdict v = store->judge(e, c.policy);
    if (one && e.state == LockFile::unreadable && !v.stale) code = static_cast<int>(Exit::data);
    else if (one && (e.state == LockFile::missing || v.stale)) code = static_cast<int>(Exit::no);
    if (!listed(c, e.state, v)) continue;
    any = true;
    if (!cli::quiet()) cli::out((c.json ? store->to_json(name, e, v) : store->describe(name, e, v)) + "\n");
  }
  return code;
}

static int run_files(const Config& c, const std::vector<std::string>& operands, bool& any) {
  // nothing there is a free lock, as the page says: `lock-status -q
  // .claude/locks/x.lock || start` works before the folder is made
  const LockFiles named = lock_files_named(operands, true);
  const bool one = named.one;
  int code = 0;
  for (const auto& [file, listed_regular] : named.files) {
    LockFile lock;
    try {
      lock = read_lock_file(file, listed_regular);
    } catch (const Error& e) {
      if (one) throw;
      cli::warn(e.what());
      continue;
    }
    Verdict v = judge_lock(lock, c.policy);
    if (one && lock.state == LockFile::unreadable && !v.stale) code = static_cast<int>(Exit::data);
    else if (one && (lock.state == LockFile::missing || v.stale)) code = static_cast<int>(Exit::no);
    if (!listed(c, lock.state, v)) continue;
    any = true;
    // -q: the exit status is the whole answer, as with grep -q
    if (!cli::quiet()) cli::out((c.json ? lock_json(file, lock, v) : describe_lock(file, lock, v)) + "\n");
  }
  return code;
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing LOCKFILE or DIR");
  if (c.only_live && c.only_stale) fail_usage("--live and --stale exclude each other");
  cli::need_etcd(a.operands);
  std::vector<std::string> files;
  int etcd_code = 0;
  bool any = false;  // a lock was listed
  for (const auto& operand : a.operands) {
    if (!etcd::is_etcd_url(operand)) files.push_back(operand);
    else if (int code = status_store(operand, c, any)) etcd_code = code;
  }
  int code = files.empty() ? 0 : run_files(c, files, any);
  if (!code) code = etcd_code;
  return c.only_live || c.only_stale ? filtered_code(code, any) : code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
