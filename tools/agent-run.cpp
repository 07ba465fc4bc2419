// agent-run: run an agent as one process group that dies with its engine.

#include <cstring>

#include "cli/tool.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/supervise.hpp"
#include "sys/base/error.hpp"
#include "sys/proc/supervise_hold.hpp"

using namespace loopkit;

static const ToolInfo info{"agent-run", "run an agent as one process group that dies with its caller",
                           "[--hold FILE] [--alive|--end PGID[:START]|FILE] [-- COMMAND...]", true};

namespace {
struct Config {
  double timeout = 0;
  double kill_after = 10;
  std::optional<std::string> alive;
  std::optional<std::string> end;
  std::optional<std::string> hold;
};

// "PGID" or "PGID:START", not a hold file's name
bool is_group_text(const std::string& text) {
  return !text.empty() && text.find_first_not_of("0123456789:") == std::string::npos;
}

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
      .text("hold", "take FILE's flock before COMMAND starts; its processes hold it while any lives", "FILE", c.hold)
      .text("alive", "exit 0 if the group PGID, or a holder of FILE, still lives, else 1", "PGID[:START]|FILE", c.alive)
      .text("end", "end the group PGID, or FILE's holders (SIGTERM, SIGKILL after --kill-after)", "PGID[:START]|FILE",
            c.end);
}

static int run(Config& c, const Args& a) {
  if (!a.operands.empty())
    fail_usage(loopkit::format("unexpected argument '{}' (the command goes after --)", a.operands[0]));
  if (c.alive || c.end) {
    if (!a.command.empty() || (c.alive && c.end) || c.hold)
      fail_usage("--alive and --end take no command, no --hold and not each other");
    const std::string& what = c.alive ? *c.alive : *c.end;
    if (!is_group_text(what)) {
      if (c.alive) return is_hold_taken(what) ? 0 : cli::no(loopkit::format("no holder of {}", quoted(what)));
      if (end_hold(what, c.kill_after)) return 0;
      return cli::no(loopkit::format("a holder of {} outlived SIGKILL", quoted(what)));
    }
    auto [pgid, start] = parse_group(c.alive ? *c.alive : *c.end);
    if (c.alive) return is_group_alive(pgid, start) ? 0 : cli::no(loopkit::format("no process group {}", pgid));
    if (end_group(pgid, start, c.kill_after)) return 0;
    return cli::no(loopkit::format("process group {} outlived SIGKILL", pgid));
  }
  if (a.command.empty()) fail_usage("missing COMMAND (after --)");
  int exec_errno = 0;
  GroupStatus st = run_group(a.command, {c.timeout, c.kill_after, c.hold.value_or("")}, exec_errno);
  if (exec_errno != 0) cli::say(loopkit::format("cannot run '{}': {}", a.command[0], std::strerror(exec_errno)));
  if (st.timed_out)
    cli::say(loopkit::format("'{}' ran past {}s; its process group was ended", a.command[0], c.timeout));
  return st.status;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
