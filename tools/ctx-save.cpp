// ctx-save: write an MDAN-AUTO v1.0 context save, redacted, 0600, never through a symlink.
#include <cstdint>
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/assign.hpp"
#include "core/ctx.hpp"
#include "core/redact.hpp"
#include "sys/beneath.hpp"
#include "sys/clock.hpp"
#include "sys/file.hpp"
#include "sys/gz.hpp"

using namespace loopkit;

static const ToolInfo info{"ctx-save", "write an MDAN-AUTO context save", "[SAVEFILE]"};

struct Config {
  std::string savefile, dir, from;
  std::vector<std::pair<std::string, std::string>> changes;  // in command-line order
  std::optional<double> if_over;
  long long keep = 0, gzip_over = ctx::default_gzip_over;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("dir", "folder of default-named saves (default $TMPDIR or /tmp)", cxxopts::value<std::string>(),
                  "DIR")("from", "start from this save instead of a fresh one", cxxopts::value<std::string>(), "FILE")(
      "phase", "set phases.current; earlier phases complete", cxxopts::value<std::string>(), "NAME")(
      "tokens", "set context.token_usage", cxxopts::value<std::string>(), "USED[/LIMIT]")(
      "message", "append a message (repeatable)", cxxopts::value<std::string>(), "ROLE=TEXT")(
      "history", "append the messages of a JSON lines file (repeatable)", cxxopts::value<std::string>(), "FILE")(
      "artifact", "store a file as context.artifacts.NAME (repeatable)", cxxopts::value<std::string>(), "NAME=PATH")(
      "set", "apply a state-set assignment (repeatable)", cxxopts::value<std::string>(), "ASSIGNMENT")(
      "if-over", "save only when token usage is at least RATIO, else exit 1", cxxopts::value<std::string>(), "RATIO")(
      "keep", "then delete all but the newest N saves in the folder", cxxopts::value<std::string>(), "N")(
      "gzip-over", "gzip saves larger than BYTES (default 1048576)", cxxopts::value<std::string>(), "BYTES");
}

static Config parse(const Args& a) {
  Config c;
  if (a.operands.size() > 1) fail_usage("too many operands: one SAVEFILE at most");
  if (!a.operands.empty()) c.savefile = a.operands[0];
  if (a.opts.count("dir")) c.dir = a.opts["dir"].as<std::string>();
  if (a.opts.count("from")) c.from = a.opts["from"].as<std::string>();
  if (a.opts.count("if-over")) c.if_over = cli::number(a.opts["if-over"].as<std::string>(), "--if-over", 0);
  if (a.opts.count("keep")) c.keep = cli::integer(a.opts["keep"].as<std::string>(), "--keep", 1, 1000000);
  if (a.opts.count("gzip-over"))
    c.gzip_over = cli::integer(a.opts["gzip-over"].as<std::string>(), "--gzip-over", 0, INT64_MAX);
  for (const auto& [key, value] : a.ordered)
    if (key == "phase" || key == "tokens" || key == "message" || key == "history" || key == "artifact" ||
        key == "set")
      c.changes.emplace_back(key, value);
  return c;
}

static bool ends_with_gz(const std::string& s) { return s.size() >= 3 && s.compare(s.size() - 3, 3, ".gz") == 0; }

static int run(const Config& c) {
  const std::string now = iso8601_utc(now_epoch());
  // Held until the save is replaced, as ctx-resume holds it: a resume counted
  // meanwhile is not lost by a save made --from the same file.
  LockedForReplace held;
  if (!c.savefile.empty()) {
    make_dirs(dir_name(c.savefile), 0700);
    held = ctx::lock_save(ctx::existing_save_path(c.savefile));
  }
  json::value doc;
  if (c.from.empty()) {
    doc = ctx::fresh_save(now);
  } else {
    std::string from = ctx::existing_save_path(c.from);
    doc = json::parse(read_file(from), from);
    ctx::check_shape(doc, from);
    ctx::check_version(doc, from);
    for (const auto& f : ctx::fill_defaults(doc, now))
      cli::warn(fmt::format("{}: {} {}, using the default", quoted(from), f.missing ? "missing" : "invalid",
                            quoted(f.path)));
  }
  for (const auto& [key, value] : c.changes) {
    if (key == "phase") ctx::set_phase(doc, value);
    else if (key == "tokens") ctx::set_tokens(doc, value);
    else if (key == "message") ctx::add_message(doc, value, now);
    else if (key == "history") ctx::add_history(doc, read_file(value), value, now);
    else if (key == "set") apply(doc, parse_assignment(value));
    else {
      ctx::add_artifact(doc, value);
      std::string path = value.substr(value.find('=') + 1);
      if (!is_plain_relative(path))
        cli::warn(fmt::format("artifact file {} is not a relative path inside the project: "
                              "ctx-resume --restore-artifacts will refuse it", quoted(path)));
    }
  }
  ctx::stamp_save(doc, now);
  ctx::check_utf8(doc);
  std::vector<std::string> found;
  redact(doc, [&](const std::string& what) { found.push_back(what); });
  if (!found.empty()) {
    std::string list;
    for (const auto& f : found) list += (list.empty() ? "" : "; ") + f;
    cli::warn(fmt::format("redacted {} secret{}: {}", found.size(), found.size() == 1 ? "" : "s", list));
  }
  if (c.if_over && ctx::token_ratio(doc) < *c.if_over)
    fail_no(fmt::format("token usage {:.4g} is below {:.4g}: not saved", ctx::token_ratio(doc), *c.if_over));

  std::string text = json::to_text(doc, json::default_layout());
  bool gz = static_cast<long long>(text.size()) > c.gzip_over;
  std::string path;
  if (c.savefile.empty()) {
    std::string dir = c.dir.empty() ? ctx::default_dir() : c.dir;
    make_dirs(dir, 0700);
    path = ctx::write_new_save(dir, now_epoch(), gz ? gzip(text) : text, gz);
  } else {
    // A save that outgrows --gzip-over becomes SAVEFILE.gz (ctx-resume and
    // --from find it by the old name); a name ending in .gz is always gzip.
    gz = gz || ends_with_gz(c.savefile);
    path = gz && !ends_with_gz(c.savefile) ? c.savefile + ".gz" : c.savefile;
    ctx::replace_save(path, gz ? gzip(text) : text);
    if (path != c.savefile && path_exists(c.savefile)) unlink_file(c.savefile);
  }
  if (c.keep > 0)
    ctx::prune_saves(dir_name(path), static_cast<std::size_t>(c.keep),
                     ctx::parse_save_name(base_name(path)) ? base_name(path) : "",
                     [](const std::string& m) { cli::warn(m); });
  cli::out("CONTEXT SAVE " + path + "\n");
  return 0;
}

int main(int argc, char** argv) { return loopkit::tool_main(info, argc, argv, add_options, parse, run); }
