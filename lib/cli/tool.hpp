// The one entry point of every tool: options, help, version, completion
// lists, the "no" answer, and the top-level handler that turns errors into
// "TOOL: message" and the exit codes of sys/error.hpp.
#pragma once
#include <cxxopts.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/error.hpp"

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
const char* program();
bool quiet();
void out(std::string_view text);      // to stdout
void warn(std::string_view message);  // "TOOL: warning: message"
void say(std::string_view message);   // "TOOL: message" on stderr
// The "no" answer (exit 1), returned rather than thrown: says "TOOL:
// message" unless -q was given, and returns 1 for the tool to return. A
// held lock is the common case for contenders, and a static binary's first
// throw costs ~16M instructions (the unwinder sorts every FDE).
int no(std::string_view message);
// a parsed integer or number option, range-checked (exit 2)
long long integer(const std::string& text, std::string_view option, long long min, long long max);
// The largest SECONDS (or other decimal) an option takes: bigger waits are
// no use, and they overflow the system's timers into busy loops.
inline constexpr double max_number = 1e9;
// a finite decimal from min to max; "nan", "inf" and "" are exit 2
double number(const std::string& text, std::string_view option, double min, double max = max_number);
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

// The table of a tool's options: each declared once, with its help, its
// argument's name and the field of the tool's config that it sets. --help
// and --completion-helper (and so the completions) are printed from it.
// Values are checked and stored as cxxopts parses them, in command-line
// order, so a repeatable option can append to a list in that order.
class Options {
public:
  using Set = std::function<void(const std::string&)>;
  // What a command line names: "--long" and "--long=V" names, and every
  // letter of each "-xyz". Declared options it does not name are left out
  // of the table, which then costs what the call uses; a name that is no
  // option still reaches cxxopts' error. Without it, the whole table.
  struct Named {
    std::vector<std::string_view> longs;
    std::string shorts;
  };
  explicit Options(cxxopts::Options& table, const Named* named = nullptr) : table_(table), named_(named) {}

  // names: "l,long" or "long", then any older long names ("l,long,old");
  // arg: the argument's name in --help
  Options& flag(const std::string& names, const std::string& help, bool& field);
  Options& flag(const std::string& names, const std::string& help, std::function<void()> on);
  Options& value(const std::string& names, const std::string& help, const std::string& arg, Set set);
  Options& text(const std::string& names, const std::string& help, const std::string& arg, std::string& field);
  Options& text(const std::string& names, const std::string& help, const std::string& arg,
                std::optional<std::string>& field);
  // --timeout SECONDS of every tool that takes etcd URLs (default 5, each call)
  Options& etcd_timeout(double& field);
  Options& number(const std::string& names, const std::string& help, const std::string& arg, double& field, double min,
                  double max = max_number);
  Options& number(const std::string& names, const std::string& help, const std::string& arg,
                  std::optional<double>& field, double min, double max = max_number);
  Options& integer(const std::string& names, const std::string& help, const std::string& arg, long long& field,
                   long long min, long long max);
  Options& integer(const std::string& names, const std::string& help, const std::string& arg,
                   std::optional<long long>& field, long long min, long long max);
  // An option whose value may be left out ("--wait" alone, as flock(1)
  // waits forever without -w): when the word after it is not a value by
  // is_value (or there is none, or it is "--"), it is given `implied`.
  // cxxopts' own implicit values would never read "--wait 10" as a value.
  Options& optional(const std::string& names, const std::string& help, const std::string& arg,
                    const std::string& implied, bool (*is_value)(std::string_view), Set set);
  struct Optional {
    std::vector<std::string> spellings;  // "--wait", "-w"
    std::string implied;
    bool (*is_value)(std::string_view);
  };
  const std::vector<Optional>& optionals() const { return optionals_; }
  // An option of two words, as jq's --arg NAME VALUE: the word after it
  // is its first, the next operand its second (cxxopts takes one word per
  // option; the pair is put together in command-line order).
  using Set2 = std::function<void(const std::string&, const std::string&)>;
  Options& pair(const std::string& name, const std::string& help, const std::string& arg, Set2 set);
  const Set2* pair_named(const std::string& name) const;
  // An older one-letter spelling of a flag, kept working but left out of
  // --help and the completions: its letter now means another thing in
  // other tools (loopkit(7), OPTIONS).
  Options& alias(char letter, const std::string& help, bool& field);
  // An option for the completion scripts, not for people: out of --help
  // and of the completions' option lists.
  Options& hidden(const std::string& name, const std::string& help, std::optional<std::string>& field);
  // Read back from Args::ordered instead of bound: for a tool
  // whose operands and options are one sequence (state-set's edits).
  Options& unbound(const std::string& names, const std::string& help, const std::string& arg = "",
                   bool repeatable = false);

private:
  bool named(const std::string& names) const;
  cxxopts::Options& table_;
  const Named* named_;
  std::vector<Optional> optionals_;
  std::vector<std::pair<std::string, Set2>> pairs_;
};
// A word that reads as a number to an option's check, so that a bad one
// is refused there: digits, a sign or a point first, "inf", "nan", or "".
bool looks_like_number(std::string_view word);
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
