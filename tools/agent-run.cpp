// agent-run: run an agent as one process group that dies with its engine.

#include <cstring>

#include "cli/tool.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/supervise.hpp"
#include "sys/base/error.hpp"
#include "sys/proc/supervise_hold.hpp"

using namespace loopkit;

static const ToolInfo info{"agent-run", "run an agent as one process group that dies with its caller",
                           "[--hold FILE] [--output FILE] [--alive|--end PGID[:START]|FILE] [-- COMMAND...]", true};

namespace {
struct Config {
  double timeout = 0;
  double kill_after = 10;
  std::optional<std::string> alive;
  std::optional<std::string> end;
  std::optional<std::string> hold;
  std::optional<std::string> output;
  long long output_limit = static_cast<long long>(OutputLog::default_limit);
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
      .text("output", "copy COMMAND's stdout and stderr (then pipes) to FILE too, in arrival order", "FILE", c.output)
      .integer("output-limit", "keep FILE's first and last BYTES/2 past BYTES (default 1048576; 0: all)", "BYTES",
               c.output_limit, 0, INT64_MAX)
      .text("hold", "take FILE's flock before COMMAND starts; its processes hold it while any lives", "FILE", c.hold)
      .text("alive", "exit 0 if the group PGID, or a holder of FILE, still lives, else 1", "PGID[:START]|FILE", c.alive)
      .text("end", "end the group PGID, or FILE's holders (SIGTERM, SIGKILL after --kill-after)", "PGID[:START]|FILE",
            c.end);
}

static int run(Config& c, const Args& a) {
  if (!a.operands.empty())
    fail_usage(loopkit::format("unexpected argument '{}' (the command goes after --)", a.operands[0]));
  if (c.alive || c.end) {
    if (!a.command.empty() || (c.alive && c.end) || c.hold || c.output)
      fail_usage("--alive and --end take no command, no --hold, no --output and not each other");
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
  if (c.output_limit == 1) fail_usage("--output-limit: '1' leaves no room for a head and a tail (0, or 2 or more)");
  std::optional<OutputLog> log;
  if (c.output) {
    log.emplace(*c.output, static_cast<uint64_t>(c.output_limit));
    if (!log->is_open()) {
      cli::say(loopkit::format("cannot open {}: {}; the output goes to the terminal only", quoted(*c.output),
                               std::strerror(errno)));
      log.reset();
    }
  }
  int exec_errno = 0;
  GroupStatus st =
      run_group(a.command, {c.timeout, c.kill_after, c.hold.value_or(""), log ? &*log : nullptr}, exec_errno);
  if (log && log->error() != 0)
    cli::say(loopkit::format("cannot write {}: {}; it holds the output up to there", quoted(*c.output),
                             std::strerror(log->error())));
  if (exec_errno != 0) cli::say(loopkit::format("cannot run '{}': {}", a.command[0], std::strerror(exec_errno)));
  if (st.timed_out)
    cli::say(loopkit::format("'{}' ran past {}s; its process group was ended", a.command[0], c.timeout));
  return st.status;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
