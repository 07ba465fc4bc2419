// What one state-get PATH operand is: jq's expression wherever jq gives the
// text a meaning, else a plain path of loopkit(7), each maybe with //VALUE.
#include "core/state/query.hpp"
#include "core/state/query_node.hpp"
#include "sys/base/error.hpp"

namespace loopkit::query {

namespace {

// Where "//" first comes outside a quoted name, or npos.
std::size_t find_alternative(std::string_view text) {
  std::size_t found = std::string_view::npos;
  each_unquoted(text, [&](std::size_t i, char c) {
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') found = i;
    return found == std::string_view::npos;
  });
  return found;
}

std::optional<Path> loopkit_path(std::string_view text) {
  try {
    return parse_path(text);
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }

// Where jq could give the text no meaning but an error, and loopkit(7)'s
// path syntax reads it: "a b" and ["a b"] (a string and an array in jq),
// [0], and a name without a dot (status, a.b: jq calls a function, one
// state-get does not know) unless it is a word of jq's (true, not, empty).
// Read as paths first, without the parser's exception: the common case.
bool loopkit_first(std::string_view text) {
  if (text.empty() || is_expression(text)) return false;
  if (text[0] == '"' || text[0] == '[') return true;
  if (!is_name_start(text[0])) return false;
  std::size_t n = 1;
  while (n < text.size() && (is_name_start(text[n]) || (text[n] >= '0' && text[n] <= '9'))) ++n;
  std::string_view word = text.substr(0, n);
  for (std::string_view w : {"true", "false", "null", "not", "empty", "select"})
    if (word == w) return false;
  return true;
}

// A text jq rejects that still reads as a loopkit path: one jq cannot parse
// at all (.history.bd-001.status), or one without a leading '.', '-' or '$'
bool path_after_all(std::string_view text, const Parsed& p) {
  bool dotted = !text.empty() && (text[0] == '.' || text[0] == '-' || text[0] == '$');
  return (p.jq_cannot_read || !dotted) && !is_expression(text);
}

// text as a path alone, or nullopt
std::optional<Path> plain_path(std::string_view text) {
  if (loopkit_first(text))
    if (auto path = loopkit_path(text)) return path;
  Parsed p = try_parse(text);
  if (p.expression) {
    if (const Path* only = only_path(*p.expression)) return *only;
    return std::nullopt;
  }
  if (path_after_all(text, p)) return loopkit_path(text);
  return std::nullopt;
}

Operand path_operand(Path p) {
  Operand o;
  o.path = std::move(p);
  return o;
}

Operand of_expression(Expression e) {
  Operand o;
  if (const Path* only = only_path(e)) {
    o.path = *only;
    return o;
  }
  o.path = parse_path(".");
  o.path.text = e.text;
  if (const Path* spelled = spelled_path(e)) {  // .history.bd-001: --shell's bd-001=VALUE
    o.path_name = spelled->last_name();
    o.single = true;
  }
  o.expression = std::move(e);
  return o;
}

// PATH//VALUE: jq's alternative when VALUE is a jq expression (0, "none",
// empty, .other), else PATH//TEXT
std::optional<Operand> with_default(std::string_view text, std::size_t alt) {
  std::optional<Path> path = plain_path(text.substr(0, alt));
  if (!path) return std::nullopt;
  std::string_view value = text.substr(alt + 2);
  Parsed v = try_parse(value);
  if (!v.expression) {
    Operand o;
    o.path = std::move(*path);
    o.text_default = std::string(value);
    return o;
  }
  auto left = std::make_shared<Node>();
  left->kind = Node::path;
  auto root = std::make_shared<Node>();
  root->kind = Node::alternative;
  root->left = std::move(left);
  root->right = std::const_pointer_cast<Node>(v.expression->root);
  bool several = path->has_all();
  std::string name = path->last_name();
  root->left->where = std::move(*path);
  Operand o = of_expression(Expression{std::move(root), std::string(text)});
  o.path_name = std::move(name);
  o.single = !several;
  return o;
}

}  // namespace

Operand read_operand(std::string_view text) {
  std::size_t alt = find_alternative(text);
  if (loopkit_first(text.substr(0, alt))) {
    if (alt != std::string_view::npos) {
      if (auto o = with_default(text, alt)) return std::move(*o);
    } else if (auto path = loopkit_path(text)) {
      return path_operand(std::move(*path));
    }
  }
  Parsed p = try_parse(text);
  if (p.expression) return of_expression(std::move(*p.expression));
  if (alt != std::string_view::npos)
    if (auto o = with_default(text, alt)) return std::move(*o);
  if (alt == std::string_view::npos && path_after_all(text, p))
    if (auto path = loopkit_path(text)) return path_operand(std::move(*path));
  if (alt == std::string_view::npos && !is_expression(text) && text[0] != '.') parse_path(text);  // its own message
  if (!text.empty() && text[0] == '.' && loopkit_path(text))
    p.error += " (jq reads - / % < > , as operators: a member whose name holds them is written .[\"a-b\"])";
  fail_usage(p.error);
}

}  // namespace loopkit::query
