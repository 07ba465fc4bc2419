// ctx-resume: load the newest valid MDAN-AUTO context save, count the resume, print where to go on.

#include "cli/tool.hpp"
#include "core/ctx/ctx.hpp"
#include "sys/base/shellwords.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;

static const ToolInfo info{"ctx-resume", "resume from an MDAN-AUTO context save", "[SAVEFILE]"};

struct Config {
  ctx::ResumeRequest request;
  enum Output { phase, shell, history, json } output = phase;
  int outputs = 0;  // how many of --shell, --history and --json
};

static void options(cli::Options& o, Config& c) {
  auto& r = c.request;
  auto output = [&c](Config::Output out) { return [&c, out] { c.output = out, ++c.outputs; }; };
  o.text("dir", "folder to look for saves in (default $TMPDIR or /tmp)", "DIR", r.dir)
      .flag("peek", "change nothing in the save (no resume counted)", r.peek)
      .flag("s,shell", "print MDAN_SAVE, MDAN_PHASE, ... for eval", output(Config::shell))
      .flag("history", "print the conversation as JSON lines", output(Config::history))
      .flag("j,json", "print the whole validated document", output(Config::json))
      .text("restore-artifacts", "write each artifact's content to DIR/its file", "DIR", r.restore)
      .flag("delete", "remove the save after a successful resume", r.remove);
}

static std::string text_of(const json::value* v) { return v ? json::raw_text(*v) : ""; }
static std::string output_of(const Config& c, const ctx::Loaded& save);

static int run(Config& c, const Args& a) {
  auto& r = c.request;
  if (a.operands.size() > 1) fail_usage("too many operands: one SAVEFILE at most");
  if (!a.operands.empty()) r.savefile = a.operands[0];
  if (c.outputs > 1) fail_usage("--shell, --history and --json exclude each other");
  if (r.peek && r.remove) fail_usage("--peek and --delete exclude each other");
  if (r.savefile == "-" && r.remove) fail_usage("--delete needs a SAVEFILE, not standard input");
  // printed before the resume is counted or the save removed: output that
  // cannot be written is exit 4 with the save as it was
  r.deliver = [&c](const ctx::Loaded& save) {
    cli::out(output_of(c, save));
    cli::flush_out();
  };
  auto found = ctx::resume(r, [](const std::string& m) { cli::warn(m); });
  if (!found)
    return cli::no(r.savefile.empty()
                       ? "nothing to resume: no save in " + quoted(r.dir.empty() ? ctx::default_dir() : r.dir)
                       : "no save " + quoted(r.savefile));
  return 0;
}

static std::string output_of(const Config& c, const ctx::Loaded& save) {
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
        out += loopkit::format("{}={}\n", name, shell_quote(json::raw_text(v)));
      break;
  }
  return out;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
