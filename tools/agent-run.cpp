// agent-run: run an agent as one process group that dies with its engine.

#include <cstring>

#include "cli/tool.hpp"
#include "sys/format.hpp"
#include "sys/supervise.hpp"

using namespace loopkit;

static const ToolInfo info{"agent-run", "run an agent as one process group that dies with its caller",
                           "[--alive|--end PGID[:START]] [-- COMMAND...]", true};

namespace {
struct Config {
  double timeout = 0;
  double kill_after = 10;
  std::optional<std::string> alive;
  std::optional<std::string> end;
};

// "PGID" or "PGID:START" (START: the leader's start time, /proc/PID/stat field 22)
std::pair<pid_t, std::optional<uint64_t>> parse_group(const std::string& text) {
  auto colon = text.find(':');
  long long pgid = cli::integer(text.substr(0, colon), "group", 2, INT32_MAX);
  std::optional<uint64_t> start;
  if (colon != std::string::npos && colon + 1 < text.size())
    start = static_cast<uint64_t>(cli::integer(text.substr(colon + 1), "start time", 0, INT64_MAX));
  return {static_cast<pid_t>(pgid), start};
}
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.number("timeout", "end the group after SECONDS (exit 124; default 0: never)", "SECONDS", c.timeout, 0)
      .number("kill-after", "SIGKILL this long after a SIGTERM (default 10)", "SECONDS", c.kill_after, 0)
      .text("alive", "exit 0 if the group PGID still has a member, else 1", "PGID[:START]", c.alive)
      .text("end", "end the group PGID (SIGTERM, SIGKILL after --kill-after)", "PGID[:START]", c.end);
}

static int run(Config& c, const Args& a) {
  if (!a.operands.empty())
    fail_usage(loopkit::format("unexpected argument '{}' (the command goes after --)", a.operands[0]));
  if (c.alive || c.end) {
    if (!a.command.empty() || (c.alive && c.end)) fail_usage("--alive and --end take no command and not each other");
    auto [pgid, start] = parse_group(c.alive ? *c.alive : *c.end);
    if (c.alive) return is_group_alive(pgid, start) ? 0 : cli::no(loopkit::format("no process group {}", pgid));
    if (end_group(pgid, start, c.kill_after)) return 0;
    return cli::no(loopkit::format("process group {} outlived SIGKILL", pgid));
  }
  if (a.command.empty()) fail_usage("missing COMMAND (after --)");
  int exec_errno = 0;
  GroupStatus st = run_group(a.command, {c.timeout, c.kill_after}, exec_errno);
  if (exec_errno != 0) cli::say(loopkit::format("cannot run '{}': {}", a.command[0], std::strerror(exec_errno)));
  if (st.timed_out)
    cli::say(loopkit::format("'{}' ran past {}s; its process group was ended", a.command[0], c.timeout));
  return st.status;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
