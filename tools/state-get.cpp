// state-get: print values from a JSON state file, jq-style paths, no jq.
#include <cctype>

#include "cli/tool.hpp"
#include "core/state/complete.hpp"
#include "core/state/query.hpp"
#include "core/state/state.hpp"
#include "sys/base/format.hpp"
#include "sys/base/etcd_url.hpp"

using namespace loopkit;

static const ToolInfo info{"state-get", "print values at paths of a JSON document", "FILE PATH..."};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  Query query;
  unsigned modes = 0;                        // the distinct modes given: one at most
  bool nul = false;                          // -0, -z: NUL after each value
  std::optional<std::string> complete_path;  // for the shells' completion
};
}  // namespace

static void options(cli::Options& o, Config& c) {
  Query& q = c.query;
  auto mode = [&c](Query::Mode m) {
    return [&c, m] {
      c.query.mode = m;
      c.modes |= 1u << m;
    };
  };
  o.text("d,default", "print VALUE for a missing or null value", "VALUE", q.default_value)
      .flag("e,exit-status", "print nothing; exit 1 if a PATH is missing, null or false (jq -e)", mode(Query::truthy))
      .flag("exists", "print nothing; exit 0 if every PATH exists (a null value too)", mode(Query::exists))
      .flag("j,json", "print every value as JSON", q.as_json)
      .flag("pretty", "indent objects and arrays over several lines", q.pretty)
      .flag("s,shell", "print NAME=VALUE lines for eval (NAME=PATH names one)", mode(Query::shell))
      .flag("k,keys", "print the member names (or indices) at each PATH", mode(Query::keys))
      .flag("0,null", "end each value with NUL, not newline (-z too)", c.nul)
      .alias('z', "--null, as sort -z and grep -z spell it", c.nul)
      .flag("must-exist", "exit 1 if FILE is missing (else it reads as {})", q.must_exist)
      .etcd_timeout(q.timeout)
      .pair("arg", "[$NAME] in a path is the member named VALUE (repeatable)", "NAME VALUE", define_path_variable)
      .hidden("complete-path", "print the paths in FILE that complete WORD", c.complete_path);
}

// NAME= before an operand with --shell: a name of letters, digits, '_' and
// '-' (an expression's own '=' comes after a path or a space)
static std::size_t shell_name_end(std::string_view text) {
  std::size_t eq = text.find('=');
  if (eq == 0 || eq == std::string_view::npos || (eq + 1 < text.size() && text[eq + 1] == '='))
    return std::string_view::npos;
  for (char c : text.substr(0, eq))
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return std::string_view::npos;
  return eq;
}

// One PATH operand (query::read_operand: jq's expression wherever jq gives
// it a meaning, else a plain path; either may end in //VALUE), with --shell
// after NAME=
static Query::Item parse_item(const Query& q, const std::string& text) {
  Query::Item item;
  std::string_view p = text;
  if (auto eq = shell_name_end(p); q.mode == Query::shell && eq != std::string_view::npos) {
    item.name = std::string(p.substr(0, eq));
    p.remove_prefix(eq + 1);
  }
  query::Operand o = query::read_operand(p);
  item.path = std::move(o.path);
  item.default_value = std::move(o.text_default);
  item.expr = std::move(o.expression);
  item.single = o.single;
  if (q.mode == Query::shell && item.name.empty()) {
    item.name = item.expr ? o.path_name : item.path.last_name();
    if (item.name.empty())
      fail_usage(loopkit::format("--shell needs NAME={} for {}", item.expr ? "EXPRESSION" : "PATH", quoted(text)));
  }
  return item;
}

// the operands: FILE, then the paths
static void parse_operands(Config& c, const Args& a) {
  Query& q = c.query;
  if (a.operands.empty()) fail_usage("missing FILE");
  q.file = a.operands[0];
  if (__builtin_popcount(c.modes) > 1) fail_usage("--exit-status, --exists, --keys and --shell exclude each other");
  std::vector<std::string> paths(a.operands.begin() + 1, a.operands.end());
  if (paths.empty()) {
    if (q.mode != Query::keys) fail_usage("missing PATH");
    paths.push_back(".");
  }
  for (const auto& text : paths) q.items.push_back(parse_item(q, text));
}

static int run(const Query& q) {
  QueryResult r = query_state(q);
  if (!r.no.empty()) return cli::no(r.no);
  const bool silent = q.mode == Query::exists || q.mode == Query::truthy;
  if (!silent) cli::out(r.out);
  if (r.missing.empty()) return 0;
  if (!cli::quiet() && !silent)
    for (const auto& p : r.missing) cli::say(p + ": not found");
  return 1;
}

int main(int argc, char** argv) {
  return tool_main<Config>(info, argc, argv, options, [](Config& c, const Args& a) {
    if (!a.operands.empty() && etcd::is_etcd_url(a.operands[0])) cli::need_etcd();
    if (c.complete_path) {
      if (a.operands.size() != 1) fail_usage("--complete-path takes FILE alone");
      for (const auto& p : complete_path(a.operands[0], *c.complete_path)) cli::out(p + "\n");
      return 0;
    }
    parse_operands(c, a);
    if (c.nul) c.query.terminator = '\0';
    return run(c.query);
  });
}
