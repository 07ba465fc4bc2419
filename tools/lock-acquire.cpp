// lock-acquire: take a session lock, or hold it while a command runs.
#include <cstring>
#include <fmt/format.h>
#include <unistd.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "sys/proc.hpp"
#include "sys/spawn.hpp"
#include "sys/clock.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-acquire", "take a session lock, or hold it while a command runs",
                           "LOCKFILE [-- COMMAND...]", true};

struct Config {
  std::string file;
  std::vector<std::string> command;
  AcquireRequest request;
  double heartbeat = 30;
  bool json = false;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("pid", "the owner process (default: the calling shell)", cxxopts::value<std::string>(), "PID")(
      "w,wait", "retry until SECONDS have passed", cxxopts::value<std::string>(), "SECONDS")(
      "session", "session name (default: the file name without .lock)", cxxopts::value<std::string>(), "NAME")(
      "stale-after", "a lock without a heartbeat for SECONDS is stale", cxxopts::value<std::string>(), "SECONDS")(
      "heartbeat", "with COMMAND: refresh the lock every SECONDS (default 30)", cxxopts::value<std::string>(),
      "SECONDS")("json", "print the lock record written");
}

static Config parse(const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  Config c;
  c.file = a.operands[0];
  c.command = a.command;
  const auto& o = a.opts;
  if (o.count("pid") && !c.command.empty()) fail_usage("--pid cannot be given with a COMMAND: lock-acquire owns the lock");
  // with a COMMAND, lock-acquire itself lives as long as the command
  pid_t pid = c.command.empty() ? static_cast<pid_t>(cli::owner_pid(o)) : getpid();
  c.request.owner = owner_process(pid);
  c.request.session = o.count("session") ? o["session"].as<std::string>() : session_of_path(c.file);
  if (o.count("wait")) c.request.wait_seconds = cli::number(o["wait"].as<std::string>(), "--wait", 0);
  if (o.count("stale-after"))
    c.request.policy.stale_after = cli::number(o["stale-after"].as<std::string>(), "--stale-after", 0);
  if (o.count("heartbeat")) c.heartbeat = cli::number(o["heartbeat"].as<std::string>(), "--heartbeat", 0.01);
  c.json = o.count("json") > 0;
  return c;
}

// The "no" answer, returned rather than thrown: a held lock is the common
// case for contenders, and a static binary's first throw costs ~16M
// instructions (the unwinder sorts every FDE).
static int refuse(const Config& c, const AcquireResult& r) {
  std::string within = c.request.wait_seconds > 0 ? fmt::format(" within {}s", c.request.wait_seconds) : "";
  if (!cli::quiet()) cli::say(fmt::format("cannot acquire {}{}: {}", quoted(c.file), within, describe_holder(r.holder)));
  return static_cast<int>(Exit::no);
}

// Hold the lock while the command runs; every way out releases it.
static int run_command(Config c) {
  HeldSignals signals;
  c.request.pause = [&](double s) { return signals.pause(s) == 0; };
  AcquireResult r = acquire_lock(c.file, c.request);
  if (r.outcome == AcquireResult::interrupted) return 128 + signals.received();
  if (r.outcome == AcquireResult::held) return refuse(c, r);
  if (c.json) cli::out(json::compact(r.record) + "\n");
  bool lost = false;
  auto beat = [&] {
    try {
      auto b = refresh_heartbeat(c.file, c.request.owner, current_epoch(), c.heartbeat);
      if (b.outcome != RefreshResult::refreshed && !lost) {
        lost = true;
        cli::warn(fmt::format("lost the lock {}: {}", quoted(c.file),
                              b.outcome == RefreshResult::missing ? "it was removed" : describe_holder(b.holder)));
      }
    } catch (const Error& e) {
      cli::warn(e.what());
    }
  };
  auto release = [&] {
    try {
      release_lock(c.file, c.request.owner, false);
    } catch (const Error& e) {
      cli::warn(e.what());
    }
  };
  ChildStatus st;
  try {
    st = run_child(c.command, c.heartbeat, beat);
  } catch (...) {
    release();
    throw;
  }
  release();
  if (st.exec_errno) cli::say(fmt::format("cannot run {}: {}", quoted(c.command[0]), std::strerror(st.exec_errno)));
  return st.status;
}

static int run(const Config& c) {
  if (!is_pid_alive(c.request.owner.pid))
    fail_no(fmt::format("cannot acquire {} for pid {}: it is not running", quoted(c.file), c.request.owner.pid));
  if (!c.command.empty()) return run_command(c);
  AcquireResult r = acquire_lock(c.file, c.request);
  if (r.outcome == AcquireResult::held) return refuse(c, r);
  if (c.json) cli::out(json::compact(r.record) + "\n");
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
