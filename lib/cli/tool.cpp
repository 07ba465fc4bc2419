#include "cli/tool.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <algorithm>
#include <new>
#include <strings.h>
#include <unistd.h>

#include "sys/clock.hpp"
#include "sys/etcd_url.hpp"
#include "sys/spawn.hpp"

namespace loopkit {

namespace {
const char* g_program = "loopkit";
bool g_quiet = false;
int g_argc = 0;
char** g_argv = nullptr;

// cxxopts quotes with typographic marks and capitalises; git style does neither
std::string plain_message(const std::string& text) {
  // copied rather than replaced in place: g++ 12 -O3 warns (-Wrestrict,
  // a false positive) on std::string::replace here, and CI builds -Werror
  std::string m;
  m.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "\xe2\x80\x98") == 0 || text.compare(i, 3, "\xe2\x80\x99") == 0) {
      m += '\'';
      i += 3;
    } else {
      m += text[i++];
    }
  }
  if (!m.empty() && m[0] >= 'A' && m[0] <= 'Z' && !(m.size() > 1 && m[1] >= 'A' && m[1] <= 'Z'))
    m[0] = static_cast<char>(m[0] - 'A' + 'a');
  while (!m.empty() && (m.back() == '.' || m.back() == '\n')) m.pop_back();
  return m;
}

void print_completion_helper(const cxxopts::Options& options) {
  // one line per option: short, long, argument name ("" for flags), help
  for (const auto& o : options.group_help("").options) {
    std::string desc = o.desc;
    for (auto& c : desc)
      if (c == '\t' || c == '\n') c = ' ';
    std::fputs(fmt::format("{}\t{}\t{}\t{}\n", o.s.empty() ? "" : "-" + o.s,
                           "--" + (o.l.empty() ? std::string() : o.l.front()),
                           o.is_boolean ? "" : (o.arg_help.empty() ? "ARG" : o.arg_help), desc)
                   .c_str(),
               stdout);
  }
}
}  // namespace

namespace cli {
const char* program() { return g_program; }
bool quiet() { return g_quiet; }
void out(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }
void warn(std::string_view message) {
  std::fputs(fmt::format("{}: warning: {}\n", g_program, message).c_str(), stderr);
}
void say(std::string_view message) { std::fputs(fmt::format("{}: {}\n", g_program, message).c_str(), stderr); }

long long integer(const std::string& text, std::string_view option, long long min, long long max) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno || *end || v < min || v > max)
    fail_usage(fmt::format("{}: not a whole number from {} to {}: {}", option, min, max, quoted(text)));
  return v;
}

double number(const std::string& text, std::string_view option, double min, double max) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  // strtod also takes "nan", "inf" and hex floats; the first two are caught
  // by the range (NaN compares false), hex is a number like any other
  if (text.empty() || errno || *end || !std::isfinite(v) || !(v >= min && v <= max))
    fail_usage(fmt::format("{}: not a number from {} to {}: {}", option, min, max, quoted(text)));
  return v;
}

pid_t owner_pid(const std::optional<long long>& pid) { return pid ? static_cast<pid_t>(*pid) : getppid(); }

bool etcd_built_in = false;

void need_etcd() {
  if (etcd_built_in) return;
  std::string helper = self_folder() + "/" LOOPKIT_ETCD_HELPER;  // bin/../libexec/loopkit/loopkit-etcd
  // argv[0] names the tool loopkit-etcd runs, whatever name ran this one
  std::vector<char*> argv(g_argv, g_argv + g_argc);
  argv[0] = const_cast<char*>(g_program);
  argv.push_back(nullptr);
  std::fflush(stdout);
  exec_replacing(helper, argv.data());
}

void need_etcd(const std::vector<std::string>& operands) {
  if (std::any_of(operands.begin(), operands.end(), [](const auto& o) { return etcd::is_etcd_url(o); })) need_etcd();
}

int no(std::string_view message) {
  if (!g_quiet) say(message);
  return static_cast<int>(Exit::no);
}

namespace {
// The names of "w,wait" or "heartbeat,every" (one letter at most, long
// names as aliases), in order.
std::vector<std::string_view> split_names(std::string_view names) {
  std::vector<std::string_view> out;
  for (size_t start = 0; start <= names.size();) {
    size_t comma = names.find(',', start);
    if (comma == std::string_view::npos) comma = names.size();
    out.push_back(names.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// "w,wait" -> "--wait": the name an option's messages give, its first long one
std::string long_name(const std::string& names) {
  for (std::string_view n : split_names(names))
    if (n.size() > 1) return "--" + std::string(n);
  return "-" + names;
}

// A value that is stored as cxxopts would store it (so that Args::opts
// still answers for it) and handed to a setter as it is parsed.
class SetValue : public cxxopts::values::standard_value<std::string> {
public:
  explicit SetValue(Options::Set set) : set_(std::move(set)) {}
  void parse(const std::string& text) const override {
    standard_value<std::string>::parse(text);
    set_(text);
  }
  std::shared_ptr<cxxopts::Value> clone() const override { return std::make_shared<SetValue>(*this); }

private:
  Options::Set set_;
};

// A flag that runs an action each time it is given (a later flag can undo
// an earlier one: --json --text)
class FlagAction : public cxxopts::values::standard_value<bool> {
public:
  explicit FlagAction(std::function<void()> on) : on_(std::move(on)) {}
  void parse(const std::string& text) const override {
    standard_value<bool>::parse(text);
    if (get()) on_();
  }
  std::shared_ptr<cxxopts::Value> clone() const override { return std::make_shared<FlagAction>(*this); }

private:
  std::function<void()> on_;
};
}  // namespace

bool Options::named(const std::string& names) const {
  if (!named_) return true;
  for (std::string_view n : split_names(names)) {
    if (n.size() == 1 && named_->shorts.find(n[0]) != std::string::npos) return true;
    for (std::string_view l : named_->longs)
      if (n.size() > 1 && l == n) return true;
  }
  return false;
}

Options& Options::optional(const std::string& names, const std::string& help, const std::string& arg,
                           const std::string& implied, bool (*is_value)(std::string_view), Set set) {
  if (!named(names)) return *this;
  Optional o{{}, implied, is_value};
  for (std::string_view n : split_names(names)) o.spellings.push_back((n.size() == 1 ? "-" : "--") + std::string(n));
  optionals_.push_back(std::move(o));
  return value(names, help, arg, std::move(set));
}

Options& Options::pair(const std::string& name, const std::string& help, const std::string& arg, Set2 set) {
  if (!named(name)) return *this;
  pairs_.emplace_back(name, std::move(set));
  table_.add_options()(name, help, cxxopts::value<std::vector<std::string>>(), arg);
  return *this;
}

const Options::Set2* Options::pair_named(const std::string& name) const {
  for (const auto& [n, set] : pairs_)
    if (n == name) return &set;
  return nullptr;
}

bool looks_like_number(std::string_view w) {
  if (w.empty()) return true;
  if (w[0] == '+' || w[0] == '-') w.remove_prefix(1);
  if (!w.empty() && ((w[0] >= '0' && w[0] <= '9') || w[0] == '.')) return true;
  auto starts = [&](std::string_view p) { return w.size() >= 3 && strncasecmp(w.data(), p.data(), 3) == 0; };
  return starts("inf") || starts("nan");
}

Options& Options::alias(char letter, const std::string& help, bool& field) {
  if (!named(std::string(1, letter))) return *this;
  table_.add_options("hidden")(std::string(1, letter), help, cxxopts::value<bool>(field));
  return *this;
}

Options& Options::hidden(const std::string& name, const std::string& help, std::optional<std::string>& field) {
  if (!named(name)) return *this;
  table_.add_options("hidden")(name, help, std::make_shared<SetValue>([&field](const std::string& t) { field = t; }),
                               "WORD");
  return *this;
}

Options& Options::flag(const std::string& names, const std::string& help, bool& field) {
  if (!named(names)) return *this;
  table_.add_options()(names, help, cxxopts::value<bool>(field));
  return *this;
}

Options& Options::flag(const std::string& names, const std::string& help, std::function<void()> on) {
  if (!named(names)) return *this;
  table_.add_options()(names, help, std::make_shared<FlagAction>(std::move(on)));
  return *this;
}

Options& Options::value(const std::string& names, const std::string& help, const std::string& arg, Set set) {
  if (!named(names)) return *this;
  table_.add_options()(names, help, std::make_shared<SetValue>(std::move(set)), arg);
  return *this;
}

Options& Options::text(const std::string& names, const std::string& help, const std::string& arg, std::string& field) {
  return value(names, help, arg, [&field](const std::string& t) { field = t; });
}

Options& Options::text(const std::string& names, const std::string& help, const std::string& arg,
                       std::optional<std::string>& field) {
  return value(names, help, arg, [&field](const std::string& t) { field = t; });
}

Options& Options::etcd_timeout(double& field) {
  return number("timeout", "for an etcd URL: seconds each call to etcd may take (default 5)", "SECONDS", field, 0.001,
                86400);
}

Options& Options::number(const std::string& names, const std::string& help, const std::string& arg, double& field,
                         double min, double max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::number(t, name, min, max);
  });
}

Options& Options::number(const std::string& names, const std::string& help, const std::string& arg,
                         std::optional<double>& field, double min, double max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::number(t, name, min, max);
  });
}

Options& Options::integer(const std::string& names, const std::string& help, const std::string& arg, long long& field,
                          long long min, long long max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::integer(t, name, min, max);
  });
}

Options& Options::integer(const std::string& names, const std::string& help, const std::string& arg,
                          std::optional<long long>& field, long long min, long long max) {
  return value(names, help, arg, [&field, name = long_name(names), min, max](const std::string& t) {
    field = cli::integer(t, name, min, max);
  });
}

Options& Options::unbound(const std::string& names, const std::string& help, const std::string& arg, bool repeatable) {
  if (!named(names)) return *this;
  if (arg.empty()) table_.add_options()(names, help);
  else if (repeatable) table_.add_options()(names, help, cxxopts::value<std::vector<std::string>>(), arg);
  else table_.add_options()(names, help, cxxopts::value<std::string>(), arg);
  return *this;
}
}  // namespace cli

namespace {
// No "--", and an option after a word that is not one: "F sh -c X" where
// "F -- sh -c X" was meant.
bool looks_like_command_without_dashes(int argc, char** argv) {
  bool operand = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) return false;
    if (argv[i][0] != '-') operand = true;
    else if (operand) return true;
  }
  return false;
}

// true when argv (up to argc) holds operands only, "-" among them
bool names_no_option(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] == '-' && argv[i][1] != '\0') return false;
  return true;
}

// The table: the tool's options, then those of every tool; argv parsed by
// it, binding the config's fields; then help, version, the completion
// list, or the tool's run.
int parse_and_run(const ToolInfo& info, int argc, char** argv, const std::function<void(cli::Options&)>& declare,
                  const std::function<int(const Args&)>& run, Args& args) {
  // Only the options the line names go into the table (each costs some
  // thousand instructions to declare), unless it asks for the table itself.
  cli::Options::Named named;
  bool whole = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      a.remove_prefix(2);
      a = a.substr(0, a.find('='));
      whole |= a == "help" || a == "completion-helper";
      named.longs.push_back(a);
    } else if (a.size() > 1 && a[0] == '-') {
      named.shorts.append(a.substr(1));
      whole |= a.find('h') != std::string_view::npos;
    }
  }
  cxxopts::Options options(info.name, info.summary);
  options.custom_help("[OPTIONS]");
  options.positional_help(info.usage);
  cli::Options table(options, whole ? nullptr : &named);
  declare(table);
  // the options of every tool, last in --help
  bool help = false, version = false, completion = false;
  table.flag("q,quiet", "say nothing when the answer is no (exit 1)", g_quiet)
      .flag("h,help", "print this help and exit", help)
      .flag("V,version", "print the version and exit", version);
  options.add_options("hidden")("completion-helper", "list the options for completion scripts",
                                cxxopts::value<bool>(completion))("args", "operands",
                                                                  cxxopts::value<std::vector<std::string>>());
  options.parse_positional("args");
  // an optional option's value left out is spelled in: "--wait" -> "--wait=inf"
  std::vector<std::string> implied(argc);
  std::vector<const char*> words(argv, argv + argc);
  for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    for (const auto& o : table.optionals()) {
      if (std::find(o.spellings.begin(), o.spellings.end(), argv[i]) == o.spellings.end()) continue;
      if (i + 1 < argc && std::strcmp(argv[i + 1], "--") != 0 && o.is_value(argv[i + 1])) {
        ++i;
      } else {
        implied[i] = std::string(argv[i]) + (argv[i][1] == '-' ? "=" : "") + o.implied;
        words[i] = implied[i].c_str();
      }
      break;
    }
  }
  auto result = options.parse(argc, words.data());
  if (help) {
    std::fputs(options.help({""}).c_str(), stdout);
    std::fputs(fmt::format("\nExit status: 0 done, 1 no, 2 usage, 3 bad data, 4 system error.\n"
                           "See {}(1) and loopkit(7).\n",
                           info.name)
                   .c_str(),
               stdout);
    return 0;
  }
  if (version) {
    std::fputs(fmt::format("{} (loopkit) {}\n", info.name, LOOPKIT_VERSION).c_str(), stdout);
    return 0;
  }
  if (completion) {
    print_completion_helper(options);
    return 0;
  }
  check_clock_override();
  // in command-line order; a two-word option takes the operand after it
  const cli::Options::Set2* pending = nullptr;
  std::string pending_name, first;
  for (const auto& kv : result.arguments()) {
    if (pending) {
      if (kv.key() != "args") break;
      (*pending)(first, kv.value());
      pending = nullptr;
    } else if ((pending = table.pair_named(kv.key()))) {
      pending_name = kv.key();
      first = kv.value();
    } else {
      if (kv.key() == "args") args.operands.push_back(kv.value());
      args.ordered.emplace_back(kv.key(), kv.value());
    }
  }
  if (pending) fail_usage(fmt::format("--{} {}: its second word is missing", pending_name, quoted(first)));
  return run(args);
}
}  // namespace

int run_tool(const ToolInfo& info, int argc, char** argv, const std::function<void(cli::Options&)>& declare,
             const std::function<int(const Args&)>& run) {
  g_program = info.name;
  set_warning_sink([](std::string_view m) { cli::warn(m); });
  g_argc = argc;
  g_argv = argv;
  g_quiet = false;  // bound to -q, and set only when it is given
  int code = 0;
  try {
    // "-- COMMAND..." is the tool's command, never options of its own
    std::vector<std::string> command;
    int own_argc = argc;
    if (info.takes_command) {
      for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--") == 0) {
          own_argc = i;
          for (int j = i + 1; j < argc; ++j) command.emplace_back(argv[j]);
          break;
        }
      }
    }
    Args args{{}, std::move(command), {}};
    if (names_no_option(own_argc, argv)) {
      // Most calls give operands only (state-get FILE PATH): building the
      // option table (cxxopts, and the C++ locale it sets up) would be three
      // quarters of a small tool's start-up, and parsing by it would leave
      // the config as it is.
      for (int i = 1; i < own_argc; ++i) {
        args.operands.emplace_back(argv[i]);
        args.ordered.emplace_back("args", argv[i]);
      }
      check_clock_override();
      code = run(args);
    } else {
      code = parse_and_run(info, own_argc, argv, declare, run, args);
    }
  } catch (const cxxopts::exceptions::no_such_option& e) {
    cli::say(plain_message(e.what()));
    // flock(1) takes "FILE COMMAND ARG..."; here the command's own options
    // are read as the tool's unless "--" comes first
    if (info.takes_command && looks_like_command_without_dashes(argc, argv))
      cli::say(fmt::format("to run a command, put '--' before it: {} {}", info.name, info.usage));
    else cli::say(fmt::format("try '{} --help'", info.name));
    code = static_cast<int>(Exit::usage);
  } catch (const cxxopts::exceptions::exception& e) {
    cli::say(plain_message(e.what()));
    cli::say(fmt::format("try '{} --help'", info.name));
    code = static_cast<int>(Exit::usage);
  } catch (const Error& e) {
    code = static_cast<int>(e.code());
    if (*e.what() && !(e.code() == Exit::no && g_quiet)) cli::say(e.what());
  } catch (const std::bad_alloc&) {
    cli::say("out of memory");
    code = static_cast<int>(Exit::system);
  } catch (const std::exception& e) {
    cli::say(plain_message(e.what()));
    code = static_cast<int>(Exit::system);
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    cli::say(fmt::format("cannot write to standard output: {}", std::strerror(errno)));
    if (code == 0) code = static_cast<int>(Exit::system);
  }
  return code;
}

}  // namespace loopkit
