// lock-status: say who holds session locks, and whether they are live or stale.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "sys/folder.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-status", "say who holds session locks, and whether they are live or stale",
                           "LOCKFILE|DIR..."};

struct Config {
  std::vector<std::string> operands;
  StalePolicy policy;
  bool json = false;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("json", "one JSON object per lock: its fields plus file, state, reason, age")(
      "stale-after", "a lock without a heartbeat for SECONDS is stale", cxxopts::value<std::string>(), "SECONDS");
}

static Config parse(const Args& a) {
  if (a.operands.empty()) fail_usage("missing LOCKFILE or DIR");
  Config c;
  c.operands = a.operands;
  if (a.opts.count("stale-after"))
    c.policy.stale_after = cli::number(a.opts["stale-after"].as<std::string>(), "--stale-after", 0);
  c.json = a.opts.count("json") > 0;
  return c;
}

static int run(const Config& c) {
  // One lock file asked about: the exit status is the answer, and a file
  // that cannot be read (a link, a FIFO) is refused with exit 4. In a sweep
  // of a folder or several operands it is a warning.
  const bool one = c.operands.size() == 1 && !is_folder(c.operands[0]);
  int code = 0;
  for (const auto& file : lock_files_in(c.operands)) {
    LockFile lock;
    try {
      lock = read_lock_file(file);
    } catch (const Error& e) {
      if (one) throw;
      cli::warn(e.what());
      continue;
    }
    Verdict v = judge_lock(lock, c.policy);
    cli::out((c.json ? lock_json(file, lock, v) : describe_lock(file, lock, v)) + "\n");
    if (one && lock.state == LockFile::unreadable && !v.stale) code = static_cast<int>(Exit::data);
    else if (one && (lock.state == LockFile::missing || v.stale)) code = static_cast<int>(Exit::no);
  }
  return code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
