#include "cli/tool.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <new>
#include <unistd.h>

#include "sys/clock.hpp"

namespace loopkit {

namespace {
const char* g_program = "loopkit";
bool g_quiet = false;

// cxxopts quotes with typographic marks and capitalises; git style does neither
std::string plain_message(std::string m) {
  for (const char* q : {"\xe2\x80\x98", "\xe2\x80\x99"}) {
    for (size_t p; (p = m.find(q)) != std::string::npos;) m.replace(p, 3, "'");
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
    std::fputs(fmt::format("{}\t{}\t{}\t{}\n", o.s.empty() ? "" : "-" + o.s, "--" + (o.l.empty() ? std::string() : o.l.front()),
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
void warn(std::string_view message) { std::fputs(fmt::format("{}: warning: {}\n", g_program, message).c_str(), stderr); }
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

long long owner_pid(const cxxopts::ParseResult& opts) {
  if (!opts.count("pid")) return getppid();
  return integer(opts["pid"].as<std::string>(), "--pid", 1, INT32_MAX);
}
}  // namespace cli

int run_tool(const ToolInfo& info, int argc, char** argv, AddOptions add, int (*body)(const Args&, void*),
             void* ctx) {
  g_program = info.name;
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
    cxxopts::Options options(info.name, info.summary);
    options.custom_help("[OPTIONS]");
    options.positional_help(info.usage);
    add(options);
    options.add_options()("q,quiet", "say nothing when the answer is no (exit 1)")(
        "h,help", "print this help and exit")("version", "print the version and exit");
    options.add_options("hidden")("completion-helper", "list the options for completion scripts")(
        "args", "operands", cxxopts::value<std::vector<std::string>>());
    options.parse_positional("args");
    auto result = options.parse(own_argc, argv);
    if (result.count("help")) {
      std::fputs(options.help({""}).c_str(), stdout);
      std::fputs(fmt::format("\nExit status: 0 done, 1 no, 2 usage, 3 bad data, 4 system error.\n"
                             "See {}(1) and loopkit(7).\n",
                             info.name)
                     .c_str(),
                 stdout);
    } else if (result.count("version")) {
      std::fputs(fmt::format("{} (loopkit) {}\n", info.name, LOOPKIT_VERSION).c_str(), stdout);
    } else if (result.count("completion-helper")) {
      print_completion_helper(options);
    } else {
      g_quiet = result.count("quiet") > 0;
      check_clock_override();
      Args args{result, {}, std::move(command), {}};
      if (result.count("args")) args.operands = result["args"].as<std::vector<std::string>>();
      for (const auto& kv : result.arguments()) args.ordered.emplace_back(kv.key(), kv.value());
      code = body(args, ctx);
    }
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
