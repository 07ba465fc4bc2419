// lock-heartbeat: refresh a lock's heartbeat, once or until its owner dies.
#include <fmt/format.h>
#include <unistd.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "sys/proc.hpp"
#include "sys/clock.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-heartbeat", "refresh a lock's heartbeat, once or until its owner dies", "LOCKFILE"};

struct Config {
  std::string file;
  pid_t pid = 0;
  double every = 0;  // 0: once
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("pid", "the owner process (default: the calling shell)", cxxopts::value<std::string>(), "PID")(
      "every", "keep beating every SECONDS until the owner dies or the lock is lost", cxxopts::value<std::string>(),
      "SECONDS");
}

static Config parse(const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  Config c;
  c.file = a.operands[0];
  const auto& o = a.opts;
  c.pid = static_cast<pid_t>(cli::owner_pid(o));
  if (o.count("every")) c.every = cli::number(o["every"].as<std::string>(), "--every", 0.01);
  return c;
}

static void beat(const Config& c, const Owner& owner) {
  RefreshResult r = refresh_heartbeat(c.file, owner, current_epoch(), c.every > 0 ? std::optional<double>(c.every) : std::nullopt);
  if (r.outcome == RefreshResult::missing) fail_no(fmt::format("no lock {}", quoted(c.file)));
  if (r.outcome == RefreshResult::not_ours)
    fail_no(fmt::format("{} is not ours (pid {}): {}", quoted(c.file), c.pid, describe_holder(r.holder)));
}

static int run(const Config& c) {
  Owner owner = owner_process(c.pid);
  // A dead owner's lock is stale; beating it would keep it falsely alive.
  if (!owner.start && !is_pid_alive(c.pid)) {
    if (c.every > 0) return 0;
    fail_no(fmt::format("cannot refresh {}: pid {} is not running", quoted(c.file), c.pid));
  }
  beat(c, owner);
  if (c.every <= 0) return 0;
  // Waiting on the owner (a pidfd) rather than sleeping lets us leave as
  // soon as it dies, not up to a whole interval later.
  while (!wait_for_exit(c.pid, c.every)) {
    if (!is_same_process_alive(c.pid, owner.start)) return 0;
    beat(c, owner);
  }
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
