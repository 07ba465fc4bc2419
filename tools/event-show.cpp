// event-show: print the events of an event log, chosen by seq, type or count.
#include <algorithm>
#include <cstdio>

#include "cli/tool.hpp"
#include "core/log/event.hpp"

using namespace loopkit;

static const ToolInfo info{"event-show", "print the events of an event log, or follow it", "FILE"};

static void options(cli::Options& o, event::ShowOptions& s) {
  constexpr long long big = 1LL << 62;
  o.value("last", "only the newest N events (of those chosen)", "N",
          [&s](const std::string& n) { s.last = static_cast<size_t>(cli::integer(n, "--last", 0, big)); })
      // --since, its older name, read a SEQ where progress-show's reads a DATE
      .value("after-seq,since", "only the events after SEQ (seq greater than SEQ)", "SEQ",
             [&s](const std::string& seq) { s.since = cli::integer(seq, "--after-seq", 0, big); })
      .value("type", "only events of TYPE (repeatable, or T1,T2)", "TYPE",
             [&s](const std::string& arg) {
               for (size_t at = 0; at <= arg.size();) {
                 size_t comma = std::min(arg.find(',', at), arg.size());
                 std::string t = arg.substr(at, comma - at);
                 event::check_type(t);
                 s.types.push_back(t);
                 at = comma + 1;
               }
             })
      .text("session", "only events of session NAME", "NAME", s.session)
      // the later of --json and --text counts
      .flag("j,json", "the lines as stored, one JSON object each", [&s] { s.json = true; })
      .flag("text", "one readable line per event (the default)", [&s] { s.json = false; })
      .flag("f,follow", "after the events there, print new ones as they come, until interrupted", s.follow)
      .number("poll", "with --follow, look for new events every SECONDS (default 0.2)", "SECONDS", s.poll, 0.01);
}

static int run(event::ShowOptions& s, const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  if (a.operands.size() > 1) fail_usage("one FILE only, got " + quoted(a.operands[1]) + " too");
  const std::string& file = a.operands[0];
  if (s.follow && file == "-") fail_usage("--follow needs a FILE, not standard input");
  if (s.last && *s.last == 0 && !s.follow) fail_usage("--last: 0 shows nothing; give at least 1");
  const bool flush = s.follow;  // a follower's reader waits for each event
  auto out = [flush](std::string_view text) {
    cli::out(text);
    if (flush) std::fflush(stdout);
  };
  switch (event::show(file, s, out, [](std::string_view message) { cli::warn(message); })) {
    case event::Shown::selected: return 0;
    // a poll for what came since SEQ: nothing yet is its normal answer,
    // printed as nothing, not a "no" a script would have to tell apart
    case event::Shown::none: return s.since ? 0 : cli::no("no event selected in " + quoted(file));
    case event::Shown::no_file: break;
  }
  return cli::no("no such event log " + quoted(file));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
