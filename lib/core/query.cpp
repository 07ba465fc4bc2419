#include "core/query.hpp"

#include <vector>

#include "core/path.hpp"
#include "sys/error.hpp"
#include "sys/format.hpp"

namespace loopkit::query {

struct Node {
  enum Kind { path, literal, object, pipe, comma, alternative, equal, not_equal, select, collect, empty } kind = empty;
  Path where;                                                          // path
  json::value value;                                                   // literal
  std::vector<std::pair<std::string, std::shared_ptr<Node>>> members;  // object, in the order written
  std::shared_ptr<Node> left, right;                                   // operators; select: left
};

using NodePtr = std::shared_ptr<Node>;

bool is_expression(std::string_view t) {
  if (t.size() > 1 && t[0] == '[' && t[1] == '.') return true;  // [.a, .b]: no path starts so
  bool found = false;
  each_unquoted(t, [&](std::size_t i, char c) {
    switch (c) {
      case ' ':
      case '\t':
      case '\n':
      case '\r':
      case '|':
      case '{':
      case '(': found = true; break;
      case '=':
      case '!': found = i + 1 < t.size() && t[i + 1] == '='; break;
      default: break;
    }
    return !found;
  });
  return found;
}

namespace {

// Nesting deeper, or more terms, than this is no one's query, and would
// only grow the stack (evaluation recurses once per operator).
constexpr int max_nesting = 200;
constexpr int max_terms = 1000;

NodePtr node(Node::Kind k) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  return n;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

class Parser {
public:
  explicit Parser(std::string_view text) : t_(text) {}

  NodePtr whole() {
    NodePtr n = pipe(true);
    skip_space();
    if (i_ != t_.size()) fail(loopkit::format("unexpected {}", quoted(t_.substr(i_, 1))));
    return n;
  }

private:
  std::string_view t_;
  std::size_t i_ = 0;
  int depth_ = 0;
  int terms_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    fail_usage(loopkit::format("malformed expression {}: {}", quoted(t_), why));
  }
  void skip_space() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }
  bool take(std::string_view token) {
    skip_space();
    if (t_.substr(i_, token.size()) != token) return false;
    i_ += token.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!take(token)) fail(loopkit::format("expected '{}'", token));
  }
  static NodePtr binary(Node::Kind k, NodePtr l, NodePtr r) {
    auto n = node(k);
    n->left = std::move(l);
    n->right = std::move(r);
    return n;
  }

  // with_comma false: an object's value, where ',' ends the member (jq's ExpD)
  NodePtr pipe(bool with_comma) {
    if (++depth_ > max_nesting) fail(loopkit::format("nested deeper than {} levels", max_nesting));
    NodePtr n = with_comma ? comma() : alt();
    while (take("|")) n = binary(Node::pipe, n, with_comma ? comma() : alt());
    --depth_;
    return n;
  }
  NodePtr comma() {
    NodePtr n = alt();
    while (take(",")) n = binary(Node::comma, n, alt());
    return n;
  }
  NodePtr alt() {
    NodePtr n = cmp();
    if (take("//")) n = binary(Node::alternative, n, alt());
    return n;
  }
  NodePtr cmp() {
    NodePtr n = term();
    if (take("==")) return binary(Node::equal, n, term());
    if (take("!=")) return binary(Node::not_equal, n, term());
    return n;
  }

  NodePtr term() {
    if (++terms_ > max_terms) fail(loopkit::format("more than {} terms", max_terms));
    skip_space();
    if (i_ == t_.size()) fail("expected a path, a literal, '{' or '(' at the end");
    char c = t_[i_];
    if (c == '.') return path();
    if (c == '{') return object();
    if (c == '[') return collect();
    if (c == '(') {
      ++i_;
      NodePtr n = pipe(true);
      expect(")");
      return n;
    }
    if (c == '"' || c == '-' || (c >= '0' && c <= '9')) return literal(c == '"' ? string_end() : number_end());
    if (is_name_start(c)) return word();
    fail(loopkit::format("unexpected {}", quoted(t_.substr(i_, 1))));
  }

  // [A]: one array of A's values; [] the empty array
  NodePtr collect() {
    ++i_;  // '['
    NodePtr n = node(Node::collect);
    if (take("]")) return n;
    n->left = pipe(true);
    expect("]");
    return n;
  }

  NodePtr word() {
    std::size_t start = i_;
    while (i_ < t_.size() && is_name_char(t_[i_])) ++i_;
    std::string_view w = t_.substr(start, i_ - start);
    if (w == "true" || w == "false" || w == "null") {
      i_ = start;
      return literal(start + w.size());
    }
    if (w == "empty") return node(Node::empty);
    if (w == "select") {
      expect("(");
      auto n = node(Node::select);
      n->left = pipe(true);
      expect(")");
      return n;
    }
    fail(loopkit::format("unknown function '{}' (paths, literals, {{...}}, select, ==, !=, //, empty and | are read)",
                         w));
  }

  // where the string literal starting at i_ ends (after its closing quote)
  std::size_t string_end() const {
    std::size_t j = i_ + 1;
    while (j < t_.size() && t_[j] != '"') j += t_[j] == '\\' ? 2 : 1;
    if (j >= t_.size()) fail("unterminated string");
    return j + 1;
  }
  std::size_t number_end() const {
    std::size_t j = i_;
    while (j < t_.size() && (std::string_view("0123456789+-.eE").find(t_[j]) != std::string_view::npos)) ++j;
    return j;
  }
  NodePtr literal(std::size_t end) {
    auto n = node(Node::literal);
    std::string_view text = t_.substr(i_, end - i_);
    try {
      n->value = json::parse(text, "expression", {}, json::Literals::big_integers);
    } catch (const Error&) {
      fail(loopkit::format("not a JSON literal: {}", text));
    }
    i_ = end;
    return n;
  }

  // A path runs to the first white space, operator or bracket of the
  // expression outside its own brackets and quoted names.
  NodePtr path() {
    std::size_t start = i_;
    int brackets = 0;
    for (; i_ < t_.size(); ++i_) {
      char c = t_[i_];
      if (c == '"') {
        i_ = string_end_at(i_) - 1;
      } else if (c == '[') {
        ++brackets;
      } else if (c == ']') {
        if (brackets-- == 0) break;  // the end of [A]
      } else if (brackets == 0 && path_ends(i_)) {
        break;
      }
    }
    auto n = node(Node::path);
    n->where = parse_path(t_.substr(start, i_ - start));
    return n;
  }
  std::size_t string_end_at(std::size_t at) const {
    std::size_t j = at + 1;
    while (j < t_.size() && t_[j] != '"') j += t_[j] == '\\' ? 2 : 1;
    return std::min(j + 1, t_.size());
  }
  bool path_ends(std::size_t at) const {
    char c = t_[at];
    if (std::string_view(" \t\n\r|,)}:").find(c) != std::string_view::npos) return true;
    char next = at + 1 < t_.size() ? t_[at + 1] : '\0';
    return (c == '/' && next == '/') || ((c == '=' || c == '!') && next == '=');
  }

  NodePtr object() {
    ++i_;  // '{'
    auto n = node(Node::object);
    if (take("}")) return n;
    do {
      skip_space();
      std::string key = member_name();
      NodePtr value;
      if (take(":")) {
        value = pipe(false);
      } else {
        // {name} is {name: .name}, {"a b"} is {"a b": .["a b"]}
        value = node(Node::path);
        value->where.segments.push_back({Segment::key, key, 0});
        value->where.text = "." + key;
      }
      n->members.emplace_back(std::move(key), std::move(value));
    } while (take(","));
    expect("}");
    return n;
  }
  std::string member_name() {
    if (i_ < t_.size() && t_[i_] == '"') {
      std::size_t end = string_end();
      json::value v;
      try {
        v = json::parse(t_.substr(i_, end - i_), "expression");
      } catch (const Error&) {
        fail("bad escape or text that is not UTF-8 in a quoted name");
      }
      i_ = end;
      return std::string(v.get_string());
    }
    std::size_t start = i_;
    while (i_ < t_.size() && is_name_char(t_[i_])) ++i_;
    if (i_ == start || !is_name_start(t_[start])) fail("expected a member name after '{' or ','");
    return std::string(t_.substr(start, i_ - start));
  }
};

}  // namespace

Expression parse(std::string_view text) {
  Expression e;
  e.text = std::string(text);
  e.root = Parser(text).whole();
  return e;
}

// ---- evaluation ------------------------------------------------------------

namespace {

using Out = std::function<void(const json::value&)>;

const json::value& null_value() {
  static const json::value v;
  return v;
}

bool truthy(const json::value& v) { return !v.is_null() && !(v.is_bool() && !v.get_bool()); }

// The segments of p from the n-th on, as jq walks them.
void walk(const Path& p, std::size_t n, const json::value& v, const Out& out) {
  if (n == p.segments.size()) return out(v);
  const Segment& s = p.segments[n];
  const std::string at = path_prefix_text(p, n + 1);
  switch (s.kind) {
    case Segment::key:
      if (v.is_null()) return walk(p, n + 1, v, out);
      if (!v.is_object())
        fail_data(loopkit::format("{}: cannot look up {} in {}", at, json::quote(s.name), with_article(type_name(v))));
      if (auto* m = v.get_object().if_contains(s.name)) return walk(p, n + 1, *m, out);
      return walk(p, n + 1, null_value(), out);
    case Segment::elem: {
      if (v.is_null()) return walk(p, n + 1, v, out);
      if (!v.is_array())
        fail_data(loopkit::format("{}: cannot index {} with [{}]", at, with_article(type_name(v)), s.index));
      const auto& a = v.get_array();
      long long i = s.index < 0 ? s.index + static_cast<long long>(a.size()) : s.index;
      return walk(p, n + 1, i >= 0 && i < static_cast<long long>(a.size()) ? a[i] : null_value(), out);
    }
    case Segment::all:
      if (v.is_array()) {
        for (const auto& e : v.get_array()) walk(p, n + 1, e, out);
      } else if (v.is_object()) {
        for (const auto& kv : v.get_object()) walk(p, n + 1, kv.value(), out);
      } else {
        fail_data(loopkit::format("{}: cannot list the elements of {}", at, with_article(type_name(v))));
      }
      return;
  }
}

void eval(const Node& n, const json::value& in, const Out& out);

// {a: A, b: B}: one object per choice of a value of each member, the first
// member's values the outer loop, as jq orders them.
void build(const Node& n, std::size_t i, const json::object& sofar, const json::value& in, const Out& out) {
  if (i == n.members.size()) return out(json::value(sofar));
  eval(*n.members[i].second, in, [&](const json::value& v) {
    json::object next = sofar;
    next[n.members[i].first] = v;
    build(n, i + 1, next, in, out);
  });
}

// A == B: jq takes B's values as the outer loop, A's inside.
void compare(const Node& n, const json::value& in, const Out& out) {
  bool want_equal = n.kind == Node::equal;
  eval(*n.right, in, [&](const json::value& r) {
    eval(*n.left, in, [&](const json::value& l) { out(json::value(json::equal(l, r) == want_equal)); });
  });
}

// A // B: A's values that are neither null nor false; if none, B's. An
// error of A stops the whole, as in jq 1.6.
void alternative(const Node& n, const json::value& in, const Out& out) {
  std::vector<json::value> kept;
  eval(*n.left, in, [&](const json::value& v) {
    if (truthy(v)) kept.push_back(v);
  });
  if (kept.empty()) return eval(*n.right, in, out);
  for (const auto& v : kept) out(v);
}

void eval(const Node& n, const json::value& in, const Out& out) {
  switch (n.kind) {
    case Node::path: return walk(n.where, 0, in, out);
    case Node::literal: return out(n.value);
    case Node::empty: return;
    case Node::object: return build(n, 0, json::object(), in, out);
    case Node::pipe: return eval(*n.left, in, [&](const json::value& v) { eval(*n.right, v, out); });
    case Node::comma: eval(*n.left, in, out); return eval(*n.right, in, out);
    case Node::alternative: return alternative(n, in, out);
    case Node::equal:
    case Node::not_equal: return compare(n, in, out);
    case Node::collect: {
      json::array a;
      if (n.left) eval(*n.left, in, [&](const json::value& v) { a.push_back(v); });
      return out(json::value(std::move(a)));
    }
    case Node::select:
      return eval(*n.left, in, [&](const json::value& c) {
        if (truthy(c)) out(in);
      });
  }
}

}  // namespace

void evaluate(const Expression& e, const json::value& input, const Out& out) { eval(*e.root, input, out); }

}  // namespace loopkit::query
