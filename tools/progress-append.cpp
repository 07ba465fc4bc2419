// progress-append: add a dated entry (or a codebase pattern) to a progress file.
#include <algorithm>

#include "cli/tool.hpp"
#include "core/log/progress.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/file.hpp"

using namespace loopkit;

static const ToolInfo info{"progress-append", "append an entry to a progress file, safely under concurrency",
                           "FILE [LINE...]"};

struct Config {
  progress::AppendRequest request;
  std::optional<std::string> id, date;
  std::vector<std::string> files;      // as given: F,... each
  std::vector<std::string> learnings;  // "- Learning: TEXT" bullets, in order
  std::string header_template;         // --template: its file
};

static void options(cli::Options& o, Config& c) {
  auto& r = c.request;
  o.text("id", "the entry's id: '## DATE - ID'", "ID", c.id)
      .text("date", "the entry's date, YYYY-MM-DD or an ISO 8601 time: its local day (default: today)", "DATE", c.date)
      .value("files", "add '- Files: F, ...' (repeatable)", "F,...",
             [&c](const std::string& f) { c.files.push_back(f); })
      .value("learning", "add '- Learning: TEXT' (repeatable)", "TEXT",
             [&c](const std::string& t) { c.learnings.push_back("- Learning: " + progress::one_line(t)); })
      .value("pattern", "add '- TEXT' under '## Codebase Patterns' (repeatable)", "TEXT",
             [&r](const std::string& t) { r.patterns.push_back(t); })
      .text("session", "a new file's session name (default: from progress-NAME.md)", "NAME", r.session)
      .text("verify", "a new file's 'Verify:' command", "COMMAND", r.verify)
      .text("template", "a new file's header from TEMPLATE ({session}, {verify}, {date} filled in)", "TEMPLATE",
            c.header_template)
      .flag("no-sync", "do not fsync (faster; the previous content is never at risk)", [&r] { r.sync = false; });
}

static std::string trimmed(std::string s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

static int run(Config& c, const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  const std::string& file = a.operands[0];
  const bool filter = file == "-";  // the document on stdin, the result on stdout
  if (filter && std::find(a.operands.begin() + 1, a.operands.end(), "-") != a.operands.end())
    fail_usage("standard input cannot be both FILE and a LINE: give FILE a name");
  auto& r = c.request;
  if (!c.header_template.empty()) r.header_template = read_file(c.header_template);
  std::vector<std::string> bullets;
  bool stdin_read = false;
  for (size_t i = 1; i < a.operands.size(); ++i) {
    const std::string& line = a.operands[i];
    if (line == "-") {
      if (stdin_read) continue;
      stdin_read = true;
      for (auto& b : progress::bullets_from(read_all(0, "standard input"))) bullets.push_back(std::move(b));
    } else {
      for (auto& b : progress::bullets_from(line)) bullets.push_back(std::move(b));
    }
  }
  if (!c.files.empty()) {
    std::string files;
    for (const auto& arg : c.files) {
      for (size_t at = 0; at <= arg.size();) {
        size_t comma = std::min(arg.find(',', at), arg.size());
        std::string t = trimmed(arg.substr(at, comma - at));
        if (!t.empty()) files += (files.empty() ? "" : ", ") + progress::one_line(t);
        at = comma + 1;
      }
    }
    if (!files.empty()) bullets.push_back("- Files: " + files);
  }
  bullets.insert(bullets.end(), c.learnings.begin(), c.learnings.end());

  std::string id = c.id.value_or("");
  if (!id.empty() || !bullets.empty()) {
    progress::Entry e;
    e.id = id;
    e.bullets = std::move(bullets);
    std::optional<std::string> day = c.date ? parse_day(*c.date) : local_date(now_epoch());
    if (!day) fail_usage("--date: not a date YYYY-MM-DD or an ISO 8601 time: " + quoted(*c.date));
    e.date = *day;
    r.entry = std::move(e);
  }
  if (filter) {
    cli::out(progress::appended(read_all(0, "standard input"), "progress.md", r));
    return 0;
  }
  // never read implicitly (a loop's "while read" input would be swallowed),
  // but piped text that would be dropped is said
  if (!r.entry && r.patterns.empty() && holds_input(0))
    cli::warn("standard input is not read without '-': give '-' as a LINE to append its lines");
  progress::append(file, r);
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
