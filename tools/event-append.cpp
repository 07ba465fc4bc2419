// event-append: add one event (or a few, --then) to a session's event log
// (events.jsonl).

#include "cli/tool.hpp"
#include "core/log/event.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;

static const ToolInfo info{"event-append", "append one numbered event to a JSON-lines event log",
                           "FILE TYPE [KEY=TEXT|KEY:=JSON...] [--then TYPE [KEY=TEXT|KEY:=JSON...]]..."};

struct Config {
  event::AppendRequest request;
  bool print_seq = false;
  bool print = false;
};

static void options(cli::Options& o, Config& c) {
  auto& r = c.request;
  o.value("session", "the event's session (default: the name of FILE's folder)", "NAME",
          [&r](const std::string& name) {
            if (name.empty()) fail_usage("--session: empty name");
            r.session = name;
          })
      .flag("print-seq", "print the seq given to the event", c.print_seq)
      .flag("print", "print the event's line as written (JSON)", c.print)
      .flag("no-sync", "do not fsync (faster; the earlier events are never at risk)", [&r] { r.sync = false; })
      .unbound("then", "append a further event of TYPE after this one; the fields that follow are its own", "TYPE",
               true);
}

// The events of the command line in order: TYPE and its fields, then each
// --then TYPE and the fields after it (Args::ordered keeps their order).
// All are read before any is written: a malformed one writes none.
static std::vector<event::AppendRequest> requests(const Config& c, const Args& a) {
  std::vector<event::AppendRequest> all;
  std::size_t operands = 0;
  for (const auto& [key, value] : a.ordered) {
    if (key == "then") {
      if (all.empty()) fail_usage("--then TYPE comes after FILE and the first TYPE");
      all.push_back(c.request);
      all.back().type = value;
    } else if (key == "args" && operands++ == 1) {
      all.push_back(c.request);
      all.back().type = value;
    } else if (key == "args" && operands > 2) {
      all.back().fields.push_back(event::parse_field(value));
    }
  }
  for (const auto& r : all) event::check_type(r.type);
  return all;
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  if (a.operands.size() < 2) fail_usage("missing TYPE operand");
  const std::string& file = a.operands[0];
  if (file == "-") fail_usage("cannot append to standard output: give a FILE");
  std::string line;
  for (const auto& r : requests(c, a)) {
    int64_t seq = event::append(file, r, c.print ? &line : nullptr);
    cli::change_made();  // appended: failing to print its seq is a warning
    if (c.print_seq) cli::out(loopkit::format("{}\n", seq));
    if (c.print) cli::out(line);
  }
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
