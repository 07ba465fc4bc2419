// The one entry point of every tool: options, help, version, completion
// lists, and the top-level handler that turns errors into "TOOL: message"
// and the contract's exit codes.
#pragma once
#include <cxxopts.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "sys/error.hpp"

namespace loopkit {

struct ToolInfo {
  const char* name;
  const char* summary;  // one line, for --help and the man page's NAME
  const char* usage;    // operands, e.g. "FILE PATH..."
  bool takes_command = false;  // "-- COMMAND..." ends the tool's own arguments
};

struct Args {
  const cxxopts::ParseResult& opts;
  std::vector<std::string> operands;
  std::vector<std::string> command;  // after "--" when the tool takes one
  // options and operands in command-line order, as (option long name, value);
  // operands have the name "args"
  std::vector<std::pair<std::string, std::string>> ordered;
};

namespace cli {
const char* program();
bool quiet();
void out(std::string_view text);      // to stdout
void warn(std::string_view message);  // "TOOL: warning: message"
void say(std::string_view message);   // "TOOL: message" on stderr
// a parsed integer or number option, range-checked (exit 2)
long long integer(const std::string& text, std::string_view option, long long min, long long max);
// The largest SECONDS (or other decimal) an option takes: bigger waits are
// no use, and they overflow the system's timers into busy loops.
inline constexpr double max_number = 1e9;
// a finite decimal from min to max; "nan", "inf" and "" are exit 2
double number(const std::string& text, std::string_view option, double min, double max = max_number);
// --pid PID, else the tool's parent: the shell that called it
long long owner_pid(const cxxopts::ParseResult& opts);
}  // namespace cli

using AddOptions = void (*)(cxxopts::Options&);

int run_tool(const ToolInfo& info, int argc, char** argv, AddOptions add, int (*body)(const Args&, void*),
             void* ctx);

template <class Config>
int tool_main(const ToolInfo& info, int argc, char** argv, AddOptions add, Config (*parse)(const Args&),
              int (*run)(const Config&)) {
  struct Fns {
    Config (*parse)(const Args&);
    int (*run)(const Config&);
  } fns{parse, run};
  return run_tool(info, argc, argv, add,
                  [](const Args& a, void* ctx) {
                    auto* f = static_cast<Fns*>(ctx);
                    return f->run(f->parse(a));
                  },
                  &fns);
}

}  // namespace loopkit
