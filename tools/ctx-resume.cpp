// ctx-resume: load the newest valid MDAN-AUTO context save, count the resume, print where to go on.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/ctx.hpp"
#include "core/shellwords.hpp"
#include "sys/beneath.hpp"
#include "sys/clock.hpp"
#include "sys/file.hpp"
#include "sys/gz.hpp"

using namespace loopkit;

static const ToolInfo info{"ctx-resume", "resume from an MDAN-AUTO context save", "[SAVEFILE]"};

struct Config {
  std::string savefile, dir, restore;
  enum Output { phase, shell, history, json } output = phase;
  bool peek = false, remove = false;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("dir", "folder to look for saves in (default $TMPDIR or /tmp)", cxxopts::value<std::string>(),
                  "DIR")("peek", "change nothing in the save (no resume counted)")(
      "s,shell", "print MDAN_SAVE, MDAN_PHASE, ... for eval")("history", "print the conversation as JSON lines")(
      "json", "print the whole validated document")(
      "restore-artifacts", "write each artifact's content to DIR/its file", cxxopts::value<std::string>(), "DIR")(
      "delete", "remove the save after a successful resume");
}

static Config parse(const Args& a) {
  Config c;
  if (a.operands.size() > 1) fail_usage("too many operands: one SAVEFILE at most");
  if (!a.operands.empty()) c.savefile = a.operands[0];
  if (a.opts.count("dir")) c.dir = a.opts["dir"].as<std::string>();
  if (a.opts.count("restore-artifacts")) c.restore = a.opts["restore-artifacts"].as<std::string>();
  c.peek = a.opts.count("peek") > 0;
  c.remove = a.opts.count("delete") > 0;
  int outputs = 0;
  for (auto [name, out] : {std::pair{"shell", Config::shell}, {"history", Config::history}, {"json", Config::json}})
    if (a.opts.count(name)) c.output = out, ++outputs;
  if (outputs > 1) fail_usage("--shell, --history and --json exclude each other");
  if (c.peek && c.remove) fail_usage("--peek and --delete exclude each other");
  if (c.savefile == "-" && c.remove) fail_usage("--delete needs a SAVEFILE, not standard input");
  return c;
}

static std::string text_of(const json::value* v) { return v ? json::raw_text(*v) : ""; }

static int run(const Config& c) {
  ctx::Loaded save;
  if (c.savefile.empty()) {
    std::string dir = c.dir.empty() ? ctx::default_dir() : c.dir;
    auto found = ctx::load_newest(dir, [](const std::string& m) { cli::warn(m); });
    if (!found) fail_no("nothing to resume: no save in " + quoted(dir));
    save = std::move(*found);
  } else {
    save = ctx::load_save(c.savefile);
  }
  for (const auto& f : ctx::fill_defaults(save.doc, iso8601_utc(now_epoch())))
    cli::warn(fmt::format("{}: {} {}, using the default", quoted(save.path), f.missing ? "missing" : "invalid",
                          quoted(f.path)));
  const bool writes = !c.peek && save.path != "-";
  if (writes) ctx::count_resume(save.doc);
  if (!c.restore.empty()) ctx::restore_artifacts(save.doc, c.restore);
  if (writes && !c.remove) ctx::replace_save(save.path, ctx::encode(save.doc, save.gz));
  if (c.remove) {
    unlink_file(save.path);
    fsync_dir(dir_name(save.path));
  }

  const json::value& d = save.doc;
  const json::object& o = d.get_object();
  auto in = [&](std::initializer_list<std::string_view> keys) {
    const json::value* v = &d;
    for (auto k : keys) v = v && v->is_object() ? v->get_object().if_contains(k) : nullptr;
    return v;
  };
  std::string out;
  switch (c.output) {
    case Config::phase: out = text_of(in({"phases", "current"})) + "\n"; break;
    case Config::json: out = json::to_text(d, json::default_layout()); break;
    case Config::history:
      if (const auto* h = o.if_contains("context"); h && h->is_object())
        if (const auto* m = h->get_object().if_contains("conversation_history"); m && m->is_array())
          for (const auto& msg : m->get_array()) out += json::compact(msg) + "\n";
      break;
    case Config::shell:
      for (auto [name, v] : {std::pair{"MDAN_SAVE", json::value(save.path)},
                             {"MDAN_PHASE", *in({"phases", "current"})},
                             {"MDAN_RESUME_COUNT", *in({"metadata", "resume_count"})},
                             {"MDAN_TOKENS_TOTAL", *in({"context", "token_usage", "total"})},
                             {"MDAN_TOKENS_LIMIT", *in({"context", "token_usage", "limit"})}})
        out += fmt::format("{}={}\n", name, shell_quote(json::raw_text(v)));
      break;
  }
  cli::out(out);
  return 0;
}

int main(int argc, char** argv) { return loopkit::tool_main(info, argc, argv, add_options, parse, run); }
