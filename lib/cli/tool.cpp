#include "cli/tool.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <new>
#include <stdio_ext.h>
#include <strings.h>
#include <unistd.h>

#include "sys/time/clock.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/base/fd.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/interrupt.hpp"
#include "sys/proc/spawn.hpp"

namespace loopkit {

namespace {
const char* g_program = "loopkit";
bool g_quiet = false;
int g_argc = 0;
char** g_argv = nullptr;
bool g_change_made = false;
int g_out_errno = 0;  // the first failed write of out()'s buffer

bool out_failed() {
  if (std::fflush(stdout) != 0 && g_out_errno == 0) g_out_errno = errno;
  return std::ferror(stdout) != 0;
}

std::string out_failure() {
  return loopkit::format("cannot write to standard output: {}", std::strerror(g_out_errno ? g_out_errno : EIO));
}

}  // namespace

namespace cli {
bool quiet() { return g_quiet; }
void out(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() && g_out_errno == 0) g_out_errno = errno;
}

void change_made() {
  if (g_change_made) return;
  g_change_made = true;
  catch_broken_pipe();
}

void flush_out() {
  catch_broken_pipe();
  if (!out_failed()) return;
  __fpurge(stdout);  // what was not written is not tried again at exit
  std::clearerr(stdout);
  const std::string failure = out_failure();
  g_out_errno = 0;
  fail(Exit::system, failure);
}
void warn(std::string_view message) {
  std::fputs(loopkit::format("{}: warning: {}\n", g_program, message).c_str(), stderr);
}
void say(std::string_view message) { std::fputs(loopkit::format("{}: {}\n", g_program, message).c_str(), stderr); }

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

// What the line names (see cli::Options::Named), and whether it asks for
// the whole table (--help, --completion-helper)
bool names_of(int argc, char** argv, cli::Options::Named& named) {
  bool whole = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") break;
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      a.remove_prefix(2);
      a = a.substr(0, a.find('='));
      whole |= a == "help" || a == "completion-helper";
      whole |= !named.add_long(a);
    } else if (a.size() > 1 && a[0] == '-') {
      named.shorts.append(a.substr(1));
      whole |= a.find('h') != std::string_view::npos;
    }
  }
  return whole;
}

// --help, --version or --completion-helper (the one left): cold, so built
// for size, and out of run_tool's way
[[gnu::cold]] int print_about(const ToolInfo& info, const cli::Options& table, bool help, bool version) {
  if (help) {
    std::fputs(table.help(info.name, info.summary, info.usage).c_str(), stdout);
    std::fputs(loopkit::format("\nExit status: 0 done, 1 no, 2 usage, 3 bad data, 4 system error.\n"
                               "See {}(1) and loopkit(7).\n",
                               info.name)
                   .c_str(),
               stdout);
  } else if (version) {
    std::fputs(loopkit::format("{} (loopkit) {}\n", info.name, LOOPKIT_VERSION).c_str(), stdout);
  } else {
    std::fputs(table.completion_lines().c_str(), stdout);
  }
  return 0;
}

// The table: the tool's options, then those of every tool; argv parsed by
// it, binding the config's fields; then help, version, the completion
// list, or the tool's run.
int parse_and_run(const ToolInfo& info, int argc, char** argv, const std::function<void(cli::Options&)>& declare,
                  const std::function<int(const Args&)>& run, Args& args) {
  // Only the options the line names go into the table, unless it asks for
  // the table itself.
  cli::Options::Named named;
  bool whole = names_of(argc, argv, named);
  cli::Options table(whole ? nullptr : &named);
  declare(table);
  // the options of every tool, last in --help
  bool help = false, version = false, completion = false;
  table.flag("q,quiet", "say nothing when the answer is no (exit 1)", g_quiet)
      .flag("h,help", "print this help and exit", help)
      .flag("V,version", "print the version and exit", version)
      .hidden_flag("completion-helper", "list the options for completion scripts", completion);
  std::vector<std::pair<std::string, std::string>> items = table.parse(argc, argv);
  if (help || version || completion) return print_about(info, table, help, version);
  check_clock_override();
  args.operands.reserve(items.size());
  for (const auto& [key, value] : items)
    if (key == "args") args.operands.push_back(value);
  args.ordered = std::move(items);
  return run(args);
}

// A buffer of our own: stdio would look at standard output (fstat, and
// ioctl on a terminal) at the first write to size its own. Fully buffered
// on a terminal too: what the tools print is flushed at the end, before a
// COMMAND starts, and by followers at each record.
void begin(const ToolInfo& info, int argc, char** argv) {
  g_program = info.name;
  static char out_buffer[BUFSIZ];
  hold_standard_fds();  // before the first open: none may take the number of a closed one
  std::setvbuf(stdout, out_buffer, _IOFBF, sizeof out_buffer);
  catch_file_size_limit();  // a write past ulimit -f fails (exit 4), it does not kill
  set_warning_sink([](std::string_view m) { cli::warn(m); });
  g_argc = argc;
  g_argv = argv;
  g_quiet = false;  // bound to -q, and set only when it is given
  g_change_made = false;
  g_out_errno = 0;
}

// The exception being handled as "TOOL: message", and its exit code: cold,
// so built for size, and out of run_tool's way
[[gnu::cold]] int report_exception(const ToolInfo& info, int argc, char** argv) {
  int code = 0;
  try {
    throw;
  } catch (const cli::UsageError& e) {
    cli::say(e.what());
    // flock(1) takes "FILE COMMAND ARG..."; here the command's own options
    // are read as the tool's unless "--" comes first
    if (e.no_such_option() && info.takes_command && looks_like_command_without_dashes(argc, argv))
      cli::say(loopkit::format("to run a command, put '--' before it: {} {}", info.name, info.usage));
    else cli::say(loopkit::format("try '{} --help'", info.name));
    code = static_cast<int>(Exit::usage);
  } catch (const Error& e) {
    code = static_cast<int>(e.code());
    if (*e.what() && !(e.code() == Exit::no && g_quiet)) cli::say(e.what());
  } catch (const std::bad_alloc&) {
    cli::say("out of memory");
    code = static_cast<int>(Exit::system);
  } catch (const std::exception& e) {
    cli::say(e.what());
    code = static_cast<int>(Exit::system);
  }
  return code;
}
}  // namespace

namespace {
// The final flush: a failure is exit 4, or past the commit point a warning
int finish_output(int code) {
  if (!out_failed()) return code;
  if (g_change_made) {
    cli::warn(out_failure());
  } else {
    cli::say(out_failure());
    if (code == 0) code = static_cast<int>(Exit::system);
  }
  __fpurge(stdout);  // exit() would try the buffer again
  return code;
}
}  // namespace

int run_tool(const ToolInfo& info, int argc, char** argv, const std::function<void(cli::Options&)>& declare,
             const std::function<int(const Args&)>& run) {
  begin(info, argc, argv);
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
      // option table would be most of a small tool's start-up, and parsing
      // by it would leave the config as it is.
      args.operands.reserve(static_cast<std::size_t>(own_argc));
      args.ordered.reserve(static_cast<std::size_t>(own_argc));
      for (int i = 1; i < own_argc; ++i) {
        args.operands.emplace_back(argv[i]);
        args.ordered.emplace_back("args", argv[i]);
      }
      check_clock_override();
      code = run(args);
    } else {
      code = parse_and_run(info, own_argc, argv, declare, run, args);
    }
  } catch (...) {
    code = report_exception(info, argc, argv);
  }
  return finish_output(code);
}

}  // namespace loopkit
