// lock-reap: remove stale session locks, for cron sweeps.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "sys/folder.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-reap", "remove stale session locks, for cron sweeps", "DIR|LOCKFILE..."};

struct Config {
  std::vector<std::string> operands;
  StalePolicy policy;
  bool dry_run = false;
  bool json = false;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("n,dry-run", "list the stale locks, remove none")(
      "json", "one JSON object per lock: its fields plus file and reason")(
      "stale-after", "a lock without a heartbeat for SECONDS is stale", cxxopts::value<std::string>(), "SECONDS");
}

static Config parse(const Args& a) {
  if (a.operands.empty()) fail_usage("missing DIR or LOCKFILE");
  Config c;
  c.operands = a.operands;
  if (a.opts.count("stale-after"))
    c.policy.stale_after = cli::number(a.opts["stale-after"].as<std::string>(), "--stale-after", 0);
  c.dry_run = a.opts.count("dry-run") > 0;
  c.json = a.opts.count("json") > 0;
  return c;
}

static int run(const Config& c) {
  int code = 0;
  // As lock-status: one lock file named alone is refused with exit 4 when it
  // cannot be read (a link, a FIFO); in a sweep of a folder or several
  // operands that is a warning, and the file is kept either way.
  const bool one = c.operands.size() == 1 && !is_folder(c.operands[0]);
  for (const auto& file : lock_files_in(c.operands)) {
    ReapResult r;
    try {
      r = reap_lock(file, c.policy, c.dry_run);
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
        cli::warn(fmt::format("{}: {}; kept", quoted(file), r.lock.problem));
        break;
      case ReapResult::failed:
        cli::say(r.error);
        code = static_cast<int>(Exit::system);
        break;
      case ReapResult::stale:
      case ReapResult::removed:
        if (c.json) {
          cli::out(lock_json(file, r.lock, r.verdict) + "\n");
        } else {
          cli::out(fmt::format("{} {}: {}: {}\n", c.dry_run ? "would remove" : "removed", file,
                               describe_owner(r.lock.record), r.verdict.reason));
        }
        break;
      default:  // live, or gone meanwhile
        break;
    }
  }
  return code;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
