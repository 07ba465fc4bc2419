// state-set: change values in a JSON state file, atomically and faithfully.
#include "cli/tool.hpp"
#include "core/shellwords.hpp"
#include "core/state.hpp"
#include "sys/clock.hpp"
#include "sys/interrupt.hpp"

using namespace loopkit;

static const ToolInfo info{"state-set", "change values in a JSON document atomically", "FILE ASSIGNMENT..."};

struct Config {
  Update update;
  bool print = false;
  bool stream = false;
  double debounce = 0;
};

static void add_options(cxxopts::Options& o) {
  using V = std::vector<std::string>;
  o.add_options()("delete", "remove the member or element at PATH", cxxopts::value<V>(), "PATH")(
      "now", "set PATH to the current time, ISO 8601 UTC", cxxopts::value<V>(), "PATH")(
      "epoch", "set PATH to the current time, epoch seconds", cxxopts::value<V>(), "PATH")(
      "expect", "change nothing (exit 1) unless PATH holds this value", cxxopts::value<V>(), "PATH=TEXT")(
      "init", "the document to start from when FILE is missing", cxxopts::value<std::string>(), "JSON")(
      "no-create", "exit 1 if FILE is missing")(
      "require", "the existing document must hold this value", cxxopts::value<V>(), "PATH:=JSON")(
      "on-invalid", "fail, or backup FILE and start again", cxxopts::value<std::string>(), "fail|backup")(
      "redact", "replace secrets in the values set with [REDACTED]")("p,print", "print the resulting document")(
      "compact", "write the document on one line")(
      "indent", "write the document indented by N spaces", cxxopts::value<std::string>(), "N")(
      "mode", "permission bits of a new FILE (default 0600)", cxxopts::value<std::string>(), "OCTAL")(
      "no-sync", "skip fsync (a power loss may lose this write, never the old content)")(
      "stream", "read assignments from stdin, one per line")(
      "debounce", "with --stream, write at most once per SECONDS", cxxopts::value<std::string>(), "SECONDS");
}

static Config parse(const Args& a) {
  Config c;
  Update& u = c.update;
  bool have_file = false;
  for (const auto& [key, value] : a.ordered) {
    if (key == "args") {
      if (!have_file) {
        u.file = value;
        have_file = true;
      } else {
        u.edits.push_back(parse_assignment(value));
      }
    } else if (key == "delete") {
      u.edits.push_back(delete_edit(value));
    } else if (key == "now" || key == "epoch") {
      u.edits.push_back(now_edit(value, key == "epoch"));
    } else if (key == "expect") {
      u.expects.push_back(parse_expectation(value));
    } else if (key == "require") {
      u.requires_.push_back(parse_expectation(value));
    }
  }
  if (!have_file) fail_usage("missing FILE");
  if (a.opts.count("init")) {
    try {
      u.init = json::parse(a.opts["init"].as<std::string>(), "--init", {}, json::Literals::as_written);
    } catch (const Error& e) {
      fail_usage(e.what());
    }
  }
  u.no_create = a.opts.count("no-create") > 0;
  if (a.opts.count("on-invalid")) {
    auto how = a.opts["on-invalid"].as<std::string>();
    if (how != "fail" && how != "backup") fail_usage("--on-invalid takes fail or backup, not " + quoted(how));
    u.backup_invalid = how == "backup";
  }
  u.redact = a.opts.count("redact") > 0;
  u.sync = a.opts.count("no-sync") == 0;
  if (a.opts.count("compact")) u.layout = json::compact_layout();
  if (a.opts.count("indent")) {
    auto n = cli::integer(a.opts["indent"].as<std::string>(), "--indent", 0, 16);
    json::Layout l = json::default_layout();
    if (n == 0) l = json::compact_layout();
    else l.indent = std::string(static_cast<std::size_t>(n), ' ');
    u.layout = l;
  }
  if (a.opts.count("mode")) {
    const auto& m = a.opts["mode"].as<std::string>();
    char* end = nullptr;
    unsigned long v = std::strtoul(m.c_str(), &end, 8);
    if (m.empty() || *end || v > 07777) fail_usage("--mode: not octal permission bits: " + quoted(m));
    u.mode = static_cast<unsigned>(v);
  }
  u.on_warning = [](const std::string& w) { cli::warn(w); };
  c.print = a.opts.count("print") > 0;
  c.stream = a.opts.count("stream") > 0;
  if (a.opts.count("debounce")) c.debounce = cli::number(a.opts["debounce"].as<std::string>(), "--debounce", 0);
  if (!c.stream && u.edits.empty() && u.expects.empty() && u.requires_.empty() && !u.layout && !c.print)
    fail_usage("nothing to do: give an ASSIGNMENT, --delete, --now or --epoch");
  return c;
}

// --stream: the lines' edits are written together at most once per
// --debounce seconds, and always at end of input or on SIGINT/SIGTERM.
// --expect and --require are checked once, on the file as found before the
// stream's first write: from then on the stream owns the document, and its
// own lines may change what they named.
static int run_stream(const Config& c) {
  catch_termination_signals();
  Update batch = c.update;
  std::string last;
  double last_write = -1e300;
  auto flush = [&] {
    if (batch.edits.empty()) return;
    last = update_state_file(batch).text;
    batch.edits.clear();
    batch.expects.clear();
    batch.requires_.clear();
    last_write = monotonic_seconds();
  };
  for (bool more = true; more;) {
    double wait = batch.edits.empty() ? -1 : last_write + c.debounce - monotonic_seconds();
    std::string line;
    switch (read_line(0, line, batch.edits.empty() ? -1 : std::max(wait, 0.0))) {
      case LineRead::timeout: flush(); continue;
      case LineRead::eof:
      case LineRead::interrupted: more = false; continue;
      case LineRead::line: break;
    }
    try {
      auto words = split_shell_words(line);
      if (words.empty() || words[0][0] == '#') continue;
      if (words[0] == "--delete" || words[0] == "--now" || words[0] == "--epoch") {
        if (words.size() != 2) fail_usage(words[0] + " takes one PATH: " + quoted(line));
        // each line's time is its own: the clock is read as the line arrives
        batch.edits.push_back(words[0] == "--delete" ? delete_edit(words[1])
                                                     : now_edit_at(words[1], words[0] == "--epoch", current_epoch()));
      } else {
        for (const auto& w : words) batch.edits.push_back(parse_assignment(w));
      }
    } catch (const Error&) {
      flush();  // what came before the bad line is kept
      throw;
    }
    if (monotonic_seconds() - last_write >= c.debounce) flush();
  }
  flush();
  if (c.print) cli::out(last);
  return 0;
}

static int run(const Config& c) {
  if (c.stream) return run_stream(c);
  auto r = update_state_file(c.update);
  if (c.print) cli::out(r.text);
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
