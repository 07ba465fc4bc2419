// A tool's option table and the parser of its command line: each option
// declared once (its names, help, argument and the config field it sets),
// then --help, --completion-helper and the parse all read the same table.
// GNU's rules: "--long", "--long=V" or "--long V", "-x", grouped "-xyz",
// "-xV" or "-x V", options and operands in any order, "--" ends options.
// Its own parser rather than cxxopts': naming one option made cxxopts build
// the C++ locale (36k instructions, half a megabyte of each static tool).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sys/error.hpp"

namespace loopkit::cli {

// The largest SECONDS (or other decimal) an option takes: bigger waits are
// no use, and they overflow the system's timers into busy loops.
inline constexpr double max_number = 1e9;

// A usage error found while parsing; no_such_option when a word names no
// option (the tool may add a hint), exit 2
class UsageError : public Error {
public:
  UsageError(const std::string& message, bool no_such_option)
      : Error(Exit::usage, message), no_such_option_(no_such_option) {}
  bool no_such_option() const { return no_such_option_; }

private:
  bool no_such_option_;
};

class Options {
public:
  using Set = std::function<void(const std::string&)>;
  using Set2 = std::function<void(const std::string&, const std::string&)>;
  // What a command line names: "--long" and "--long=V" names, and every
  // letter of each "-xyz". Declared options it does not name are left out
  // of the table, which then costs what the call uses; a name that is no
  // option still reaches the parser's error. Without it, the whole table.
  struct Named {
    std::vector<std::string_view> longs;
    std::string shorts;
  };
  explicit Options(const Named* named = nullptr);

  // names: "l,long" or "long", then any older long names ("l,long,old");
  // arg: the argument's name in --help
  Options& flag(std::string_view names, std::string_view help, bool& field);
  Options& flag(std::string_view names, std::string_view help, std::function<void()> on);
  Options& value(std::string_view names, std::string_view help, std::string_view arg, Set set);
  Options& text(std::string_view names, std::string_view help, std::string_view arg, std::string& field);
  Options& text(std::string_view names, std::string_view help, std::string_view arg, std::optional<std::string>& field);
  // --timeout SECONDS of every tool that takes etcd URLs (default 5, each call)
  Options& etcd_timeout(double& field);
  Options& number(std::string_view names, std::string_view help, std::string_view arg, double& field, double min,
                  double max = max_number);
  Options& number(std::string_view names, std::string_view help, std::string_view arg, std::optional<double>& field,
                  double min, double max = max_number);
  Options& integer(std::string_view names, std::string_view help, std::string_view arg, long long& field, long long min,
                   long long max);
  Options& integer(std::string_view names, std::string_view help, std::string_view arg, std::optional<long long>& field,
                   long long min, long long max);
  // An option whose value may be left out ("--wait" alone, as flock(1)
  // waits forever without -w): when the word after it is not a value by
  // is_value (or there is none, or it is "--"), it is given `implied`.
  Options& optional(std::string_view names, std::string_view help, std::string_view arg, std::string_view implied,
                    bool (*is_value)(std::string_view), Set set);
  // An option of two words, as jq's --arg NAME VALUE: the word after it
  // is its first, the next operand its second.
  Options& pair(std::string_view name, std::string_view help, std::string_view arg, Set2 set);
  // An older one-letter spelling of a flag, kept working but left out of
  // --help and the completions: its letter now means another thing in
  // other tools (loopkit(7), OPTIONS).
  Options& alias(char letter, std::string_view help, bool& field);
  // An option for the completion scripts, not for people: out of --help
  // and of the completions' option lists.
  Options& hidden(std::string_view name, std::string_view help, std::optional<std::string>& field);
  Options& hidden_flag(std::string_view name, std::string_view help, bool& field);
  // Read back from the parse's items instead of bound: for a tool whose
  // operands and options are one sequence (state-set's edits).
  Options& unbound(std::string_view names, std::string_view help, std::string_view arg = "", bool repeatable = false);

  // The words of argv[1..argc) as (option's first long name, value) and
  // ("args", operand) in command-line order, each value already handed to
  // its setter; a flag's value is "true". A pair's second word is the
  // operand after it. Usage errors: UsageError.
  std::vector<std::pair<std::string, std::string>> parse(int argc, char** argv) const;
  // --help's text: summary, usage line, then the options not hidden
  std::string help(std::string_view name, std::string_view summary, std::string_view usage) const;
  // one line per option not hidden: -x TAB --long TAB ARG ("" for flags) TAB help
  std::string completion_lines() const;

private:
  // The names, help, argument and implied value are views of the tool's
  // string literals, which outlive every table: declaring copies nothing.
  struct Spec {
    char letter = 0;
    std::string_view names;       // as declared: "l,long,old"
    std::string_view first_long;  // "" for a letter alone
    std::string_view help, arg;   // arg "" for flags
    bool hidden = false;
    bool is_pair = false;
    bool* flag = nullptr;      // a flag bound to its field
    Set set;                   // values (and flags, with "true")
    Set2 set2;                 // pairs
    std::string_view implied;  // optional values: given when the value is left out
    bool (*is_value)(std::string_view) = nullptr;
    bool has_long(std::string_view name) const;
    std::string key() const { return first_long.empty() ? std::string(1, letter) : std::string(first_long); }
    std::string spelling() const { return (first_long.empty() ? "-" : "--") + key(); }
  };
  bool named(std::string_view names) const;
  static void give(const Spec& s, const std::string& value);
  Spec& add(std::string_view names, std::string_view help, std::string_view arg, Set set);
  const Spec* find_long(std::string_view name) const;
  const Spec* find_letter(char c) const;
  std::size_t parse_long(int argc, char** argv, std::size_t i,
                         std::vector<std::pair<std::string, std::string>>& out) const;
  std::size_t parse_short(int argc, char** argv, std::size_t i,
                          std::vector<std::pair<std::string, std::string>>& out) const;
  const Named* named_;
  std::uint64_t hints_ = 0;  // a bit for each name named_ holds (see named)
  std::vector<Spec> specs_;
};

// a parsed integer or number option, range-checked (exit 2)
long long integer(const std::string& text, std::string_view option, long long min, long long max);
// a finite decimal from min to max; "nan", "inf" and "" are exit 2
double number(const std::string& text, std::string_view option, double min, double max = max_number);

// A word that reads as a number to an option's check, so that a bad one
// is refused there: digits, a sign or a point first, "inf", "nan", or "".
bool looks_like_number(std::string_view word);

}  // namespace loopkit::cli
