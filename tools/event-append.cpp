// event-append: add one event to a session's event log (events.jsonl).
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/event.hpp"

using namespace loopkit;

static const ToolInfo info{"event-append", "append one numbered event to a JSON-lines event log",
                           "FILE TYPE [KEY=TEXT|KEY:=JSON...]"};

struct Config {
  std::string file;
  event::AppendRequest request;
  bool print_seq = false;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("session", "the event's session (default: the name of FILE's folder)",
                  cxxopts::value<std::string>(), "NAME")("print-seq", "print the seq given to the event")(
      "no-sync", "do not fsync (faster; the earlier events are never at risk)");
}

static Config parse(const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  if (a.operands.size() < 2) fail_usage("missing TYPE operand");
  Config c;
  c.file = a.operands[0];
  if (c.file == "-") fail_usage("cannot append to standard output: give a FILE");
  auto& r = c.request;
  r.type = a.operands[1];
  event::check_type(r.type);
  if (a.opts.count("session")) {
    r.session = a.opts["session"].as<std::string>();
    if (r.session.empty()) fail_usage("--session: empty name");
  }
  for (size_t i = 2; i < a.operands.size(); ++i) r.fields.push_back(event::parse_field(a.operands[i]));
  r.sync = a.opts.count("no-sync") == 0;
  c.print_seq = a.opts.count("print-seq") > 0;
  return c;
}

static int run(const Config& c) {
  int64_t seq = event::append(c.file, c.request);
  if (c.print_seq) cli::out(fmt::format("{}\n", seq));
  return 0;
}

int main(int argc, char** argv) { return loopkit::tool_main(info, argc, argv, add_options, parse, run); }
