// progress-append: add a dated entry (or a codebase pattern) to a progress file.
#include <algorithm>

#include "cli/tool.hpp"
#include "core/progress.hpp"
#include "sys/clock.hpp"
#include "sys/fd.hpp"

using namespace loopkit;

static const ToolInfo info{"progress-append", "append an entry to a progress file, safely under concurrency",
                           "FILE [LINE...]"};

struct Config {
  std::string file;
  progress::AppendRequest request;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("id", "the entry's id: '## DATE - ID'", cxxopts::value<std::string>(), "ID")(
      "date", "the entry's date (default: today, local time)", cxxopts::value<std::string>(), "YYYY-MM-DD")(
      "files", "add '- Files: F, ...' (repeatable)", cxxopts::value<std::vector<std::string>>(), "F,...")(
      "learning", "add '- Learning: TEXT' (repeatable)", cxxopts::value<std::string>(), "TEXT")(
      "pattern", "add '- TEXT' under '## Codebase Patterns' (repeatable)", cxxopts::value<std::string>(), "TEXT")(
      "session", "a new file's session name (default: from progress-NAME.md)", cxxopts::value<std::string>(),
      "NAME")("verify", "a new file's 'Verify:' command", cxxopts::value<std::string>(), "COMMAND")(
      "no-sync", "do not fsync (faster; the previous content is never at risk)");
}

static std::string trimmed(std::string s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

static Config parse(const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  Config c;
  c.file = a.operands[0];
  if (c.file == "-") fail_usage("cannot append to standard input: give a FILE");
  auto& r = c.request;
  if (a.opts.count("session")) r.session = a.opts["session"].as<std::string>();
  if (a.opts.count("verify")) r.verify = a.opts["verify"].as<std::string>();
  r.sync = a.opts.count("no-sync") == 0;

  std::vector<std::string> bullets, learnings;
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
  // repeated options, in command-line order
  for (const auto& [name, value] : a.ordered) {
    if (name == "learning") learnings.push_back("- Learning: " + progress::one_line(value));
    if (name == "pattern") r.patterns.push_back(value);
  }
  if (a.opts.count("files")) {
    std::string files;
    for (const auto& arg : a.opts["files"].as<std::vector<std::string>>()) {
      for (size_t at = 0; at <= arg.size();) {
        size_t comma = std::min(arg.find(',', at), arg.size());
        std::string t = trimmed(arg.substr(at, comma - at));
        if (!t.empty()) files += (files.empty() ? "" : ", ") + progress::one_line(t);
        at = comma + 1;
      }
    }
    if (!files.empty()) bullets.push_back("- Files: " + files);
  }
  bullets.insert(bullets.end(), learnings.begin(), learnings.end());

  std::string id = a.opts.count("id") ? a.opts["id"].as<std::string>() : "";
  if (!id.empty() || !bullets.empty()) {
    progress::Entry e;
    e.id = id;
    e.bullets = std::move(bullets);
    e.date = a.opts.count("date") ? a.opts["date"].as<std::string>() : local_date(now_epoch());
    if (!progress::is_date(e.date)) fail_usage("--date: not a date YYYY-MM-DD: " + quoted(e.date));
    r.entry = std::move(e);
  }
  return c;
}

static int run(const Config& c) {
  progress::append(c.file, c.request);
  return 0;
}

int main(int argc, char** argv) { return loopkit::tool_main(info, argc, argv, add_options, parse, run); }
