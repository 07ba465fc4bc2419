// ctx-save: write an MDAN-AUTO v1.0 context save, redacted, 0600, never through a symlink.
#include <cstdint>

#include "cli/tool.hpp"
#include "core/ctx/ctx.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;

static const ToolInfo info{"ctx-save", "write an MDAN-AUTO context save", "[SAVEFILE]"};

static void options(cli::Options& o, ctx::SaveRequest& r) {
  // the changes apply in command-line order
  auto change = [&r](const char* what) {
    return [&r, what](const std::string& v) { r.changes.emplace_back(what, v); };
  };
  o.text("dir", "folder of default-named saves (default $TMPDIR or /tmp)", "DIR", r.dir)
      .text("from", "start from this save instead of a fresh one", "FILE", r.from)
      .value("phase", "set phases.current; earlier phases complete", "NAME", change("phase"))
      .value("tokens", "set context.token_usage", "USED[/LIMIT]", change("tokens"))
      .value("message", "append a message (repeatable)", "ROLE=TEXT", change("message"))
      .value("history", "append the messages of a JSON lines file (repeatable)", "FILE", change("history"))
      .value("artifact", "store a file as context.artifacts.NAME (repeatable)", "NAME=PATH", change("artifact"))
      .value("set", "apply a state-set assignment (repeatable)", "ASSIGNMENT", change("set"))
      .value("now", "set PATH to the current time, ISO 8601 UTC (PATH?: only if missing or null)", "PATH",
             change("now"))
      .value("epoch", "set PATH to the current time, epoch seconds (PATH?: only if missing or null)", "PATH",
             change("epoch"))
      .optional("if-over",
                "save only when token usage is at least RATIO (alone: the save's save_threshold), else exit 1", "RATIO",
                "", cli::looks_like_number,
                [&r](const std::string& v) {
                  r.if_over_threshold = v.empty();
                  if (!v.empty()) r.if_over = cli::number(v, "--if-over", 0);
                })
      .value("keep", "then delete all but the newest N saves of the project in the folder (0: all)", "N",
             [&r](const std::string& n) { r.keep = static_cast<std::size_t>(cli::integer(n, "--keep", 0, 1000000)); })
      .integer("gzip-over", "gzip saves larger than BYTES (default 1048576)", "BYTES", r.gzip_over, 0, INT64_MAX);
}

static int run(ctx::SaveRequest& r, const Args& a) {
  if (a.operands.size() > 1) fail_usage("too many operands: one SAVEFILE at most");
  if (!a.operands.empty()) r.savefile = a.operands[0];
  ctx::Saved saved = ctx::save(r, [](const std::string& m) { cli::warn(m); });
  if (saved.path.empty())
    return cli::no(loopkit::format("token usage {} is below {}: not saved", saved.token_ratio, saved.threshold));
  if (saved.path != "-") cli::change_made();  // saved: failing to print its name is a warning
  if (saved.removed) return 0;                // --keep 0: nothing left to name
  // to "-", standard output is the document itself (a filter)
  cli::out(saved.path == "-" ? saved.text : "CONTEXT SAVE " + saved.path + "\n");
  return 0;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
