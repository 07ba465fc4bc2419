// lock-status: say who holds session locks, and whether they are live or stale.

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
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

// What a lock says to the exit status when the operands name it alone: a
// record that cannot be read is bad data, a free or stale lock is "no".
static int lock_code(const ListedLock& l, const Verdict& v) {
  if (!l.one) return 0;
  if (l.entry.state == LockFile::unreadable && !v.stale) return static_cast<int>(Exit::data);
  if (l.entry.state == LockFile::missing || v.stale) return static_cast<int>(Exit::no);
  return 0;
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing LOCKFILE or DIR");
  if (c.only_live && c.only_stale) fail_usage("--live and --stale exclude each other");
  cli::need_etcd(a.operands);
  int file_code = 0, etcd_code = 0;
  bool any = false;  // a lock was listed
  // nothing there is a free lock, as the page says: `lock-status -q
  // .claude/locks/x.lock || start` works before the folder is made; an
  // etcd lease is the heartbeat, so only a dead owner of this host makes
  // a key stale
  list_locks(a.operands, {.missing_is_free = true, .with_ttl = true, .timeout = c.timeout}, [&](const ListedLock& l) {
    if (l.error) {
      if (l.one) throw;
      cli::warn(l.error->what());
      return;
    }
    Verdict v = l.store.judge(l.entry, c.policy);
    if (int code = lock_code(l, v)) (l.file ? file_code : etcd_code) = code;
    if (!listed(c, l.entry.state, v)) return;
    any = true;
    // -q: the exit status is the whole answer, as with grep -q
    if (!cli::quiet())
      cli::out((c.json ? l.store.to_json(l.name, l.entry, v) : l.store.describe(l.name, l.entry, v)) + "\n");
  });
  int code = file_code ? file_code : etcd_code;
  return c.only_live || c.only_stale ? filtered_code(code, any) : code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
