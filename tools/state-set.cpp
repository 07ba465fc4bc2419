// state-set: change values in a JSON state file, atomically and faithfully.
#include <cstdlib>
#include <cstring>

#include "cli/tool.hpp"
#include "sys/base/shellwords.hpp"
#include "core/state/state.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/time/clock.hpp"
#include "sys/proc/interrupt.hpp"

using namespace loopkit;

static const ToolInfo info{"state-set", "change values in a JSON document atomically", "FILE ASSIGNMENT..."};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  Update update;
  bool print = false;
  bool stream = false;
  double debounce = 0;
  bool compact = false, no_sync = false;
  std::optional<long long> indent;
  std::optional<long long> pid;
};
}  // namespace

// The edits of --delete, --now and --epoch, the checks of --expect and
// --require and the ASSIGNMENT operands are one sequence: those options are
// read back in command-line order from Args::ordered, the rest are bound.
static void options(cli::Options& o, Config& c) {
  Update& u = c.update;
  o.unbound("delete", "remove the member or element at PATH", "PATH", true)
      .unbound("now", "set PATH to the current time, ISO 8601 UTC (PATH?: only if missing or null)", "PATH", true)
      .unbound("epoch", "set PATH to the current time, epoch seconds (PATH?: only if missing or null)", "PATH", true)
      .unbound("expect", "change nothing (exit 1) unless PATH holds this value", "PATH=TEXT", true)
      .value("init", "the document to start from when FILE is missing", "JSON",
             [&u](const std::string& text) {
               try {
                 u.init = json::parse(text, "--init", {}, json::Literals::as_written);
               } catch (const Error& e) {
                 fail_usage(e.what());
               }
             })
      .flag("no-create", "exit 1 if FILE is missing", u.no_create)
      .pair("arg", "[$NAME] in a path is the member named VALUE (repeatable)", "NAME VALUE", define_path_variable)
      .unbound("require", "the existing document must hold this value", "PATH:=JSON", true)
      .value("on-invalid", "fail, or backup FILE and start again", "fail|backup",
             [&u](const std::string& how) {
               if (how != "fail" && how != "backup")
                 fail_usage("--on-invalid takes fail or backup, not " + quoted(how));
               u.backup_invalid = how == "backup";
             })
      .text("fence", "write only while LOCKFILE is still held by its owner (--pid), checked with the write", "LOCKFILE",
            u.fence)
      .integer("pid", "with --fence: the lock's owner (default: the calling shell)", "PID", c.pid, 1, INT32_MAX)
      .flag("redact", "replace secrets in the values set with [REDACTED]", u.redact)
      .flag("p,print", "print the resulting document", c.print)
      .flag("compact", "write the document on one line", c.compact)
      .integer("indent", "write the document indented by N spaces", "N", c.indent, 0, 16)
      .value("mode", "permission bits of a new FILE (default 0600)", "OCTAL",
             [&u](const std::string& m) {
               char* end = nullptr;
               unsigned long v = std::strtoul(m.c_str(), &end, 8);
               if (m.empty() || *end || v > 07777) fail_usage("--mode: not octal permission bits: " + quoted(m));
               u.mode = static_cast<unsigned>(v);
             })
      .flag("no-sync", "skip fsync (a power loss may lose this write, never the old content)", c.no_sync)
      .flag("stream", "read assignments from stdin, one per line", c.stream)
      .number("debounce", "with --stream, write at most once per SECONDS", "SECONDS", c.debounce, 0)
      .etcd_timeout(u.timeout);
}

static void parse_sequence(Config& c, const Args& a) {
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
  if (c.compact) u.layout = json::compact_layout();
  if (c.indent) {  // after --compact, which it overrides
    json::Layout l = json::default_layout();
    if (*c.indent == 0) l = json::compact_layout();
    else l.indent = std::string(static_cast<std::size_t>(*c.indent), ' ');
    u.layout = l;
  }
  u.sync = !c.no_sync;
  if (c.pid && u.fence.empty()) fail_usage("--pid names the owner of the --fence lock: give --fence LOCK too");
  if (!u.fence.empty()) u.fence_owner = cli::owner_pid(c.pid);
  u.want_text = c.print || u.file == "-";  // "-": a filter, the result on stdout
  if (u.file == "-" && c.stream) fail_usage("--stream reads its lines from standard input: FILE cannot be '-'");
  u.on_warning = [](const std::string& w) { cli::warn(w); };
  if (!c.stream && u.edits.empty() && u.expects.empty() && u.requires_.empty() && !u.layout && !c.print)
    fail_usage("nothing to do: give an ASSIGNMENT, --delete, --now or --epoch");
}

// -p once FILE was written: the change is made, so a failure to print it
// is a warning and the exit status stays 0 (cli::change_made). Before that,
// or as a filter, it is exit 4 as usual.
static void print_result(const std::string& text, bool committed) {
  if (committed) cli::change_made();
  cli::out(text);
}

// --stream: the lines' edits are written together at most once per
// --debounce seconds, and always at end of input or on SIGINT/SIGTERM.
// --expect and --require are checked once, on the file as found before the
// stream's first write: from then on the stream owns the document, and its
// own lines may change what they named. Cold: a call's common path never
// streams, so it is built for size.
[[gnu::cold]] static int run_stream(const Config& c) {
  catch_termination_signals();
  Update batch = c.update;
  std::string last;
  double last_write = -1e300;
  std::string no;  // --no-create or --expect said no (at the first write): the stream stops
  bool wrote = false;
  auto flush = [&] {
    if (batch.edits.empty()) return true;
    UpdateResult r = update_state_file(batch);
    if (!r.no.empty()) {
      no = std::move(r.no);
      return false;
    }
    wrote = wrote || r.written;
    last = std::move(r.text);
    batch.edits.clear();
    batch.line_ends.clear();
    batch.expects.clear();
    batch.requires_.clear();
    last_write = monotonic_seconds();
    // a line of the batch failed: the lines before it are written, and its
    // error ends the stream, as it would have without --debounce
    if (r.failed) throw *r.failed;
    return true;
  };
  for (bool more = true; more;) {
    double wait = batch.edits.empty() ? -1 : last_write + c.debounce - monotonic_seconds();
    std::string line;
    switch (read_line(0, line, batch.edits.empty() ? -1 : std::max(wait, 0.0))) {
      case LineRead::timeout:
        if (!flush()) return cli::no(no);
        continue;
      case LineRead::eof:
      case LineRead::interrupted: more = false; continue;
      case LineRead::line: break;
    }
    try {
      auto words = split_shell_words(line);
      if (words.empty()) continue;  // a blank line or a comment
      if (words[0] == "--delete" || words[0] == "--now" || words[0] == "--epoch") {
        if (words.size() != 2) fail_usage(words[0] + " takes one PATH: " + quoted(line));
        // each line's time is its own: the clock is read as the line arrives
        batch.edits.push_back(words[0] == "--delete" ? delete_edit(words[1])
                                                     : now_edit_at(words[1], words[0] == "--epoch", current_epoch()));
      } else {
        for (const auto& w : words) batch.edits.push_back(parse_assignment(w));
      }
      batch.line_ends.push_back(batch.edits.size());
    } catch (const Error&) {
      if (!flush()) return cli::no(no);  // what came before the bad line is kept
      throw;
    }
    if (monotonic_seconds() - last_write >= c.debounce && !flush()) return cli::no(no);
  }
  if (!flush()) return cli::no(no);
  if (c.print) print_result(last, wrote);
  return 0;
}

static int run(const Config& c) {
  if (c.stream) return run_stream(c);
  auto r = update_state_file(c.update);
  if (!r.no.empty()) return cli::no(r.no);
  if (c.print || c.update.file == "-") print_result(r.text, r.written && c.update.file != "-");
  return 0;
}

int main(int argc, char** argv) {
  return tool_main<Config>(info, argc, argv, options, [](Config& c, const Args& a) {
    if (!a.operands.empty() && etcd::is_etcd_url(a.operands[0])) cli::need_etcd();
    parse_sequence(c, a);
    return run(c);
  });
}
