// A tool's option table and the parser of its command line: each option
// declared once (its names, help, argument and the config field it sets),
// then --help, --completion-helper and the parse all read the same table.
// GNU's rules: "--long", "--long=V" or "--long V", "-x", grouped "-xyz",
// "-xV" or "-x V", options and operands in any order, "--" ends options.
// Its own parser rather than cxxopts': naming one option made cxxopts build
// the C++ locale (36k instructions, half a megabyte of each static tool).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sys/base/error.hpp"

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

// An option's names as declared: "l,long" or "long", then any older long
// names ("l,long,old"). Split when the tool is compiled (consteval), so that
// declaring an option the line does not name costs a comparison or two.
struct Names {
  // the views first: clang 16 stored a consteval-made Names whose char sat
  // between them wrongly (the right values at compile time, others at run time)
  std::string_view all;         // as declared
  std::string_view first_long;  // "" for a letter alone
  std::string_view older;       // the long names after the first: "old", "" mostly
  char letter = 0;              // 0 when none
  unsigned hint = 0;            // first_long's bit among a line's long names (see named)

  consteval Names(const char* declared) : Names(split(declared)) {}
  // A long name's bit of 64: a line's names set theirs, and a declared name
  // whose bit is clear is not among them
  static constexpr unsigned hint_of(std::string_view l) {
    return l.empty()
               ? 0
               : (l.size() * 7 + static_cast<unsigned char>(l.front()) + static_cast<unsigned char>(l.back())) & 63;
  }
  // one letter known only at run time (alias): a view that outlives the table
  static constexpr Names one_letter(std::string_view letter) { return Names(letter, letter[0]); }

private:
  constexpr Names(std::string_view l, char c) : all(l), letter(c) {}
  constexpr Names(std::string_view a, char c, std::string_view first, std::string_view rest)
      : all(a), first_long(first), older(rest), letter(c), hint(hint_of(first)) {}
  // the parts of "l,long,old", checked: a compile error when they are wrong
  static constexpr Names split(std::string_view all) {
    char letter = 0;
    std::string_view first, rest;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= all.size(); ++i) {
      if (i < all.size() && all[i] != ',') continue;
      const std::string_view n = all.substr(start, i - start);
      if (n.empty()) throw "an option name is empty";
      if (n.size() == 1) {
        if (letter || !first.empty()) throw "a letter must come first, once";
        letter = n[0];
      } else if (first.empty()) {
        first = n;
      } else {
        rest = all.substr(start);
        break;
      }
      start = i + 1;
    }
    return Names(all, letter, first, rest);
  }
};

class Options {
public:
  using Set = std::function<void(const std::string&)>;
  using Set2 = std::function<void(const std::string&, const std::string&)>;
  // What a command line names: "--long" and "--long=V" names, and every
  // letter of each "-xyz". Declared options it does not name are left out
  // of the table, which then costs what the call uses; a name that is no
  // option still reaches the parser's error. Without it, the whole table.
  // Held in place, as a line names few options: more than max_longs long
  // names and the caller asks for the whole table instead.
  struct Named {
    static constexpr std::size_t max_longs = 8;
    std::array<std::string_view, max_longs> long_names{};
    std::size_t count = 0;
    std::string shorts;
    std::span<const std::string_view> longs() const { return {long_names.data(), count}; }
    // false when it holds max_longs already
    bool add_long(std::string_view l) {
      if (count == max_longs) return false;
      long_names[count++] = l;
      return true;
    }
  };
  explicit Options(const Named* named = nullptr);

  // names: "l,long" or "long", then any older long names ("l,long,old");
  // arg: the argument's name in --help. Each declaration is inline and
  // tests named() first, with names split at compile time: an option the
  // line does not name costs a few instructions, its setter never built.
  Options& flag(Names names, std::string_view help, bool& field) {
    return named(names) ? flag_named(names, help, field) : *this;
  }
  template <class F>
  requires std::is_invocable_v<F> Options& flag(Names names, std::string_view help, F&& on) {
    return named(names) ? flag_named(names, help, std::function<void()>(std::forward<F>(on))) : *this;
  }
  template <class F>
  Options& value(Names names, std::string_view help, std::string_view arg, F&& set) {
    return named(names) ? value_named(names, help, arg, Set(std::forward<F>(set))) : *this;
  }
  Options& text(Names names, std::string_view help, std::string_view arg, std::string& field) {
    return named(names) ? text_named(names, help, arg, field) : *this;
  }
  Options& text(Names names, std::string_view help, std::string_view arg, std::optional<std::string>& field) {
    return named(names) ? text_named(names, help, arg, field) : *this;
  }
  // --timeout SECONDS of every tool that takes etcd URLs (default 5, each call)
  Options& etcd_timeout(double& field) {
    return number("timeout", "for an etcd URL: seconds each call to etcd may take (default 5)", "SECONDS", field, 0.001,
                  86400);
  }
  Options& number(Names names, std::string_view help, std::string_view arg, double& field, double min,
                  double max = max_number) {
    return named(names) ? number_named(names, help, arg, field, min, max) : *this;
  }
  Options& number(Names names, std::string_view help, std::string_view arg, std::optional<double>& field, double min,
                  double max = max_number) {
    return named(names) ? number_named(names, help, arg, field, min, max) : *this;
  }
  Options& integer(Names names, std::string_view help, std::string_view arg, long long& field, long long min,
                   long long max) {
    return named(names) ? integer_named(names, help, arg, field, min, max) : *this;
  }
  Options& integer(Names names, std::string_view help, std::string_view arg, std::optional<long long>& field,
                   long long min, long long max) {
    return named(names) ? integer_named(names, help, arg, field, min, max) : *this;
  }
  // An option whose value may be left out ("--wait" alone, as flock(1)
  // waits forever without -w): when the word after it is not a value by
  // is_value (or there is none, or it is "--"), it is given `implied`.
  template <class F>
  Options& optional(Names names, std::string_view help, std::string_view arg, std::string_view implied,
                    bool (*is_value)(std::string_view), F&& set) {
    return named(names) ? optional_named(names, help, arg, implied, is_value, Set(std::forward<F>(set))) : *this;
  }
  // An option of two words, as jq's --arg NAME VALUE: the word after it
  // is its first, the next operand its second.
  template <class F>
  Options& pair(Names name, std::string_view help, std::string_view arg, F&& set) {
    return named(name) ? pair_named(name, help, arg, Set2(std::forward<F>(set))) : *this;
  }
  // An older one-letter spelling of a flag, kept working but left out of
  // --help and the completions: its letter now means another thing in
  // other tools (loopkit(7), OPTIONS).
  Options& alias(char letter, std::string_view help, bool& field);
  // An option for the completion scripts, not for people: out of --help
  // and of the completions' option lists.
  Options& hidden(Names name, std::string_view help, std::optional<std::string>& field) {
    return named(name) ? hidden_named(name, help, field) : *this;
  }
  Options& hidden_flag(Names name, std::string_view help, bool& field) {
    return named(name) ? hidden_flag_named(name, help, field) : *this;
  }
  // Read back from the parse's items instead of bound: for a tool whose
  // operands and options are one sequence (state-set's edits).
  Options& unbound(Names names, std::string_view help, std::string_view arg = "", bool /*repeatable*/ = false) {
    return named(names) ? unbound_named(names, help, arg) : *this;
  }

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
  // Whether the line names one of names; inline, as most declarations it
  // answers are not named and a bit tells
  bool named(const Names& names) const {
    if (!named_) return true;
    const bool maybe =
        (names.letter && !named_->shorts.empty()) || !names.older.empty() || (long_hints_ >> names.hint & 1);
    return maybe && named_exactly(names);
  }
  bool named_exactly(const Names& names) const;
  // the declarations of options the line names (or of the whole table)
  Options& flag_named(const Names& names, std::string_view help, bool& field);
  Options& flag_named(const Names& names, std::string_view help, std::function<void()> on);
  Options& value_named(const Names& names, std::string_view help, std::string_view arg, Set set);
  Options& text_named(const Names& names, std::string_view help, std::string_view arg, std::string& field);
  Options& text_named(const Names& names, std::string_view help, std::string_view arg,
                      std::optional<std::string>& field);
  Options& number_named(const Names& names, std::string_view help, std::string_view arg, double& field, double min,
                        double max);
  Options& number_named(const Names& names, std::string_view help, std::string_view arg, std::optional<double>& field,
                        double min, double max);
  Options& integer_named(const Names& names, std::string_view help, std::string_view arg, long long& field,
                         long long min, long long max);
  Options& integer_named(const Names& names, std::string_view help, std::string_view arg,
                         std::optional<long long>& field, long long min, long long max);
  Options& optional_named(const Names& names, std::string_view help, std::string_view arg, std::string_view implied,
                          bool (*is_value)(std::string_view), Set set);
  Options& pair_named(const Names& name, std::string_view help, std::string_view arg, Set2 set);
  Options& hidden_named(const Names& name, std::string_view help, std::optional<std::string>& field);
  Options& hidden_flag_named(const Names& name, std::string_view help, bool& field);
  Options& unbound_named(const Names& names, std::string_view help, std::string_view arg);
  static void give(const Spec& s, const std::string& value);
  Spec& add(const Names& names, std::string_view help, std::string_view arg, Set set);
  const Spec* find_long(std::string_view name) const;
  const Spec* find_letter(char c) const;
  std::size_t parse_long(int argc, char** argv, std::size_t i,
                         std::vector<std::pair<std::string, std::string>>& out) const;
  std::size_t parse_short(int argc, char** argv, std::size_t i,
                          std::vector<std::pair<std::string, std::string>>& out) const;
  const Named* named_;
  std::uint64_t long_hints_ = 0;  // the bits (Names::hint_of) of the long names named_ holds
  std::vector<Spec> specs_;
};

// a parsed integer or number option, range-checked (exit 2)
long long integer(const std::string& text, std::string_view option, long long min, long long max);
// a finite decimal from min to max; "nan", "inf" and "" are exit 2
double number(const std::string& text, std::string_view option, double min, double max = max_number);

// A flag's value given with it (--json=false): true or false as the word
// says ("true", "yes", "1", "false", "no", "0"); any other is exit 2
[[gnu::cold]] bool flag_value(const std::string& text, std::string_view option);

// A word that reads as a number to an option's check, so that a bad one
// is refused there: digits, a sign or a point first, "inf", "nan", or "".
bool looks_like_number(std::string_view word);

}  // namespace loopkit::cli
