// event-show: print the events of an event log, chosen by seq, type or count.
#include <algorithm>
#include <cstdio>

#include "cli/tool.hpp"
#include "core/event.hpp"

using namespace loopkit;

static const ToolInfo info{"event-show", "print the events of an event log, or follow it", "FILE"};

struct Config {
  std::string file;
  event::ShowOptions show;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("last", "only the newest N events (of those chosen)", cxxopts::value<std::string>(), "N")(
      "since", "only the events after SEQ (seq greater than SEQ)", cxxopts::value<std::string>(), "SEQ")(
      "type", "only events of TYPE (repeatable, or T1,T2)", cxxopts::value<std::vector<std::string>>(), "TYPE")(
      "session", "only events of session NAME", cxxopts::value<std::string>(), "NAME")(
      "json", "the lines as stored, one JSON object each")("text", "one readable line per event (the default)")(
      "f,follow", "after the events there, print new ones as they come, until interrupted")(
      "poll", "with --follow, look for new events every SECONDS (default 0.2)", cxxopts::value<std::string>(),
      "SECONDS");
}

static Config parse(const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  if (a.operands.size() > 1) fail_usage("one FILE only, got " + quoted(a.operands[1]) + " too");
  Config c;
  c.file = a.operands[0];
  auto& s = c.show;
  constexpr long long big = 1LL << 62;
  if (a.opts.count("last")) s.last = static_cast<size_t>(cli::integer(a.opts["last"].as<std::string>(), "--last", 0, big));
  if (a.opts.count("since")) s.since = cli::integer(a.opts["since"].as<std::string>(), "--since", 0, big);
  if (a.opts.count("type")) {
    for (const auto& arg : a.opts["type"].as<std::vector<std::string>>()) {
      for (size_t at = 0; at <= arg.size();) {
        size_t comma = std::min(arg.find(',', at), arg.size());
        std::string t = arg.substr(at, comma - at);
        event::check_type(t);
        s.types.push_back(t);
        at = comma + 1;
      }
    }
  }
  if (a.opts.count("session")) s.session = a.opts["session"].as<std::string>();
  // the later of --json and --text counts
  for (const auto& [name, value] : a.ordered) {
    if (name == "json") s.json = true;
    if (name == "text") s.json = false;
  }
  s.follow = a.opts.count("follow") > 0;
  if (a.opts.count("poll")) s.poll = cli::number(a.opts["poll"].as<std::string>(), "--poll", 0.01);
  if (s.follow && c.file == "-") fail_usage("--follow needs a FILE, not standard input");
  if (s.last && *s.last == 0 && !s.follow) fail_usage("--last: 0 shows nothing; give at least 1");
  return c;
}

static int run(const Config& c) {
  const bool flush = c.show.follow;  // a follower's reader waits for each event
  bool found = event::show(
      c.file, c.show,
      [flush](std::string_view text) {
        cli::out(text);
        if (flush) std::fflush(stdout);
      },
      [](std::string_view message) { cli::warn(message); });
  if (!found) fail_no("no event selected in " + quoted(c.file));
  return 0;
}

int main(int argc, char** argv) { return loopkit::tool_main(info, argc, argv, add_options, parse, run); }
