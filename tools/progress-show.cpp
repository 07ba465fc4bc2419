// progress-show: print a progress file's header and patterns plus chosen entries.
#include "cli/tool.hpp"
#include "core/progress.hpp"

using namespace loopkit;

static const ToolInfo info{"progress-show", "print a progress file, or the header and chosen entries", "FILE"};

struct Config {
  std::string file;
  progress::ShowOptions show;
};

static void add_options(cxxopts::Options& o) {
  o.add_options()("last", "only the newest N entries", cxxopts::value<std::string>(), "N")(
      "id", "only the entries with this id", cxxopts::value<std::string>(), "ID")(
      "since", "only the entries dated DATE or later", cxxopts::value<std::string>(), "YYYY-MM-DD")(
      "learnings", "everything after the first '---' line but the '---' lines (the seed's awk)")(
      "max-bytes", "at most N bytes: the header and the newest entries that fit", cxxopts::value<std::string>(),
      "N");
}

static Config parse(const Args& a) {
  if (a.operands.empty()) fail_usage("missing FILE operand");
  if (a.operands.size() > 1) fail_usage("one FILE only, got " + quoted(a.operands[1]) + " too");
  Config c;
  c.file = a.operands[0];
  auto& s = c.show;
  constexpr long long big = 1LL << 62;
  if (a.opts.count("last")) s.last = static_cast<size_t>(cli::integer(a.opts["last"].as<std::string>(), "--last", 0, big));
  if (a.opts.count("max-bytes"))
    s.max_bytes = static_cast<size_t>(cli::integer(a.opts["max-bytes"].as<std::string>(), "--max-bytes", 0, big));
  if (a.opts.count("id")) {
    s.id = a.opts["id"].as<std::string>();
    if (s.id.empty()) fail_usage("--id: empty id");
  }
  if (a.opts.count("since")) {
    s.since = a.opts["since"].as<std::string>();
    if (!progress::is_date(s.since)) fail_usage("--since: not a date YYYY-MM-DD: " + quoted(s.since));
  }
  s.learnings = a.opts.count("learnings") > 0;
  return c;
}

static int run(const Config& c) {
  bool found = progress::show(c.file, c.show, [](std::string_view text) { cli::out(text); });
  if (!found) {
    const auto& s = c.show;
    fail_no(s.id.empty() ? "no entry since " + s.since + " in " + quoted(c.file)
                         : "no entry " + quoted(s.id) + (s.since.empty() ? "" : " since " + s.since) + " in " +
                               quoted(c.file));
  }
  return 0;
}

int main(int argc, char** argv) { return loopkit::tool_main(info, argc, argv, add_options, parse, run); }
