// lock-status: say who holds session locks, and whether they are live or stale.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-status", "say who holds session locks, and whether they are live or stale",
                           "LOCKFILE|DIR..."};

struct Config {
  StalePolicy policy;
  bool json = false;
};

static void options(cli::Options& o, Config& c) {
  o.flag("j,json", "one JSON object per lock: its fields plus file, state, reason, age", c.json)
      .number("stale-after", "a lock without a heartbeat for SECONDS is stale", "SECONDS", c.policy.stale_after, 0);
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing LOCKFILE or DIR");
  const bool one = names_one_lock(a.operands);
  int code = 0;
  for (const auto& file : lock_files_in(a.operands)) {
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

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
