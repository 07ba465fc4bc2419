// state-get: print values from a JSON state file, jq-style paths, no jq.
#include "cli/tool.hpp"
#include "core/state.hpp"

using namespace loopkit;

static const ToolInfo info{"state-get", "print values at paths of a JSON document", "FILE PATH..."};

static void add_options(cxxopts::Options& o) {
  o.add_options()("d,default", "print VALUE for a missing or null value", cxxopts::value<std::string>(), "VALUE")(
      "e,exists", "print nothing; exit 0 if every PATH exists")("j,json", "print every value as JSON")(
      "pretty", "indent objects and arrays over several lines")(
      "s,shell", "print NAME=VALUE lines for eval (NAME=PATH names one)")(
      "k,keys", "print the member names (or indices) at each PATH")("0,null", "end each value with NUL, not newline");
}

static Query parse(const Args& a) {
  Query q;
  if (a.operands.empty()) fail_usage("missing FILE");
  q.file = a.operands[0];
  if (a.opts.count("default")) q.default_value = a.opts["default"].as<std::string>();
  int modes = 0;
  if (a.opts.count("exists")) q.mode = Query::exists, ++modes;
  if (a.opts.count("keys")) q.mode = Query::keys, ++modes;
  if (a.opts.count("shell")) q.mode = Query::shell, ++modes;
  if (modes > 1) fail_usage("--exists, --keys and --shell exclude each other");
  q.as_json = a.opts.count("json") > 0;
  q.pretty = a.opts.count("pretty") > 0;
  if (a.opts.count("null")) q.terminator = '\0';
  std::vector<std::string> paths(a.operands.begin() + 1, a.operands.end());
  if (paths.empty()) {
    if (q.mode != Query::keys) fail_usage("missing PATH");
    paths.push_back(".");
  }
  for (const auto& text : paths) {
    Query::Item item;
    std::string_view p = text;
    // NAME=PATH names a --shell variable; '=' cannot occur in a bare path
    if (auto eq = p.find('='); q.mode == Query::shell && eq != std::string_view::npos && p[0] != '[') {
      item.name = std::string(p.substr(0, eq));
      p.remove_prefix(eq + 1);
    }
    item.path = parse_path(p);
    if (q.mode == Query::shell && item.name.empty()) {
      item.name = item.path.last_name();
      if (item.name.empty()) fail_usage("--shell needs NAME=PATH for " + quoted(text));
    }
    q.items.push_back(std::move(item));
  }
  return q;
}

static int run(const Query& q) {
  QueryResult r = query_state(q);
  if (q.mode != Query::exists) cli::out(r.out);
  if (r.missing.empty()) return 0;
  if (!cli::quiet() && q.mode != Query::exists)
    for (const auto& p : r.missing) cli::say(p + ": not found");
  return 1;
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, add_options, parse, run); }
