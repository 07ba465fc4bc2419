// The one entry point of every tool: options, help, version, completion
// lists, the "no" answer, and the top-level handler that turns errors into
// "TOOL: message" and the exit codes of sys/base/error.hpp.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/options.hpp"
#include "sys/base/error.hpp"

namespace loopkit {

struct ToolInfo {
  const char* name;
  const char* summary;         // one line, for --help and the man page's NAME
  const char* usage;           // operands, e.g. "FILE PATH..."
  bool takes_command = false;  // "-- COMMAND..." ends the tool's own arguments
};

struct Args {
  std::vector<std::string> operands;
  std::vector<std::string> command;  // after "--" when the tool takes one
  // options and operands in command-line order, as (option long name, value);
  // operands have the name "args"
  std::vector<std::pair<std::string, std::string>> ordered;
};

namespace cli {
bool quiet();
void out(std::string_view text);  // to stdout, buffered until the tool ends (or flush_out)
// The change is made (loopkit(7), COMMIT POINT): from here on a failure to
// print (a full disk, a closed standard output, a broken pipe) is a warning
// and leaves the exit status as it is, since a caller that retries on exit 4
// would make the change twice. A broken pipe no longer kills the tool.
void change_made();
// What out() buffered, written now, before a change that must not be made
// unprinted (or that is undone when printing fails): exit 4 when it cannot
// be, a broken pipe included (never SIGPIPE).
void flush_out();
void warn(std::string_view message);  // "TOOL: warning: message"
void say(std::string_view message);   // "TOOL: message" on stderr
// The "no" answer (exit 1), returned rather than thrown: says "TOOL:
// message" unless -q was given, and returns 1 for the tool to return. A
// held lock is the common case for contenders, and a static binary's first
// throw costs ~16M instructions (the unwinder sorts every FDE).
int no(std::string_view message);
// --pid PID when given, else the tool's parent: the shell that called it
pid_t owner_pid(const std::optional<long long>& pid);

// The tools on PATH are built without the etcd client: its start-up
// (Asio's and OpenSSL's static constructors, a bigger image to map) would
// cost every call on a file. libexec/loopkit/loopkit-etcd holds the same
// tools built with it, and its main sets etcd_built_in. A tool calls
// need_etcd() as soon as it sees an etcd URL operand, before it reads
// standard input or touches a file: without the client, it hands its whole
// call (argv, environment, descriptors) to loopkit-etcd by exec(2).
extern bool etcd_built_in;
void need_etcd();
void need_etcd(const std::vector<std::string>& operands);  // when any of them is an etcd URL

}  // namespace cli

// Parses argv by the table that declare builds (binding the fields of a
// config that lives as long as the call), then runs run on the config, the
// operands and the command; help, version, usage errors and exceptions are
// handled here, once for every tool.
int run_tool(const ToolInfo& info, int argc, char** argv, const std::function<void(cli::Options&)>& declare,
             const std::function<int(const Args&)>& run);

template <class Config>
int tool_main(const ToolInfo& info, int argc, char** argv, void (*declare)(cli::Options&, Config&),
              int (*run)(Config&, const Args&)) {
  Config config{};
  return run_tool(
      info, argc, argv, [&](cli::Options& o) { declare(o, config); }, [&](const Args& a) { return run(config, a); });
}

}  // namespace loopkit
