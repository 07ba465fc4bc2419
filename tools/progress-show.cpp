// progress-show: print a progress file's header and patterns plus chosen entries.
#include <cstdio>

#include "cli/tool.hpp"
#include "core/log/progress.hpp"
#include "sys/time/clock.hpp"

using namespace loopkit;

static const ToolInfo info{"progress-show", "print a progress file, or the header and chosen entries", "FILE"};

static void options(cli::Options& o, progress::ShowOptions& s) {
  constexpr long long big = 1LL << 62;
  o.value("last", "only the newest N entries", "N",
          [&s](const std::string& n) { s.last = static_cast<size_t>(cli::integer(n, "--last", 0, big)); })
      .value("id", "only the entries with this id", "ID",
             [&s](const std::string& id) {
               if (id.empty()) fail_usage("--id: empty id");
               s.id = id;
             })
      .value("since", "only the entries dated DATE or later (YYYY-MM-DD, or an ISO 8601 time: its local day)", "DATE",
             [&s](const std::string& date) {
               std::optional<std::string> day = parse_day(date);
               if (!day) fail_usage("--since: not a date YYYY-MM-DD or an ISO 8601 time: " + quoted(date));
               s.since = *day;
             })
      .flag("learnings", "everything after the first '---' line but the '---' lines (the seed's awk)", s.learnings)
      .value("max-bytes", "at most N bytes: the header and the newest entries that fit", "N",
             [&s](const std::string& n) { s.max_bytes = static_cast<size_t>(cli::integer(n, "--max-bytes", 0, big)); })
      .flag("j,json", "one JSON object per entry: date, id, bullets, files, learning", s.json)
      .flag("f,follow", "then print each entry appended, once whole, until interrupted", s.follow)
      .number("poll", "with --follow, look for new entries every SECONDS (default 0.2)", "SECONDS", s.poll, 0.01);
}

static int run(progress::ShowOptions& s, const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  if (a.operands.size() > 1) fail_usage("one FILE only, got " + quoted(a.operands[1]) + " too");
  const std::string& file = a.operands[0];
  if (s.json && s.learnings) fail_usage("--json and --learnings exclude each other");
  const bool flush = s.follow;  // a follower's reader waits for each entry
  auto out = [flush](std::string_view text) {
    cli::out(text);
    if (flush) std::fflush(stdout);
  };
  switch (progress::show(file, s, out, [](std::string_view message) { cli::warn(message); })) {
    case progress::Shown::selected: return 0;
    case progress::Shown::no_match:
      return cli::no(s.id.empty() ? "no entry since " + s.since + " in " + quoted(file)
                                  : "no entry " + quoted(s.id) + (s.since.empty() ? "" : " since " + s.since) + " in " +
                                        quoted(file));
    case progress::Shown::no_file: break;
  }
  return cli::no("no such progress file " + quoted(file));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
