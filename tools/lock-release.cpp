// lock-release: remove a session lock that is ours, or any with --force.
#include <fmt/format.h>
#include <unistd.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-release", "remove a session lock that is ours, or any with --force", "LOCKFILE"};

struct Config {
  std::string file;
  pid_t pid = 0;
  bool force = false;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("pid", "the owner process (default: the calling shell)", cxxopts::value<std::string>(), "PID")(
      "f,force", "remove the lock whoever holds it");
}

static Config parse(const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  Config c;
  c.file = a.operands[0];
  const auto& o = a.opts;
  c.pid = static_cast<pid_t>(cli::owner_pid(o));
  c.force = o.count("force") > 0;
  return c;
}

static int run(const Config& c) {
  switch (release_lock(c.file, owner_process(c.pid), c.force)) {
    case Released::removed:
      return 0;
    case Released::missing:
      fail_no(fmt::format("no lock {}", quoted(c.file)));
    case Released::not_ours:
      break;
  }
  fail_no(fmt::format("{} is not ours (pid {}): {}", quoted(c.file), c.pid, describe_holder(read_lock_file(c.file))));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
