#include "core/state/query.hpp"

#include <vector>

#include "core/scan/path.hpp"
#include "core/state/query_node.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::query {

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

// Why a text is not read; syntax: jq itself could not parse it either
struct Unread {
  std::string why;
  bool syntax = false;
};

NodePtr node(Node::Kind k, char op = 0, NodePtr l = nullptr, NodePtr r = nullptr) {
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->op = op;
  n->left = std::move(l);
  n->right = std::move(r);
  return n;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Parser {
public:
  explicit Parser(std::string_view text) : t_(text) {}

  NodePtr whole() {
    NodePtr n = pipe();
    skip_space();
    if (i_ != t_.size()) unexpected();
    return n;
  }

private:
  std::string_view t_;
  std::size_t i_ = 0;
  int depth_ = 0;
  int terms_ = 0;

  [[noreturn]] static void fail(std::string why) { throw Unread{std::move(why), false}; }
  [[noreturn]] static void syntax(std::string why) { throw Unread{std::move(why), true}; }
  char at(std::size_t k = 0) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
  void skip_space() {
    for (;;) {
      while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
      if (at() != '#') return;
      while (i_ < t_.size() && t_[i_] != '\n') ++i_;  // jq's comment
    }
  }
  bool take(std::string_view token, std::string_view not_before = {}) {
    skip_space();
    if (t_.substr(i_, token.size()) != token) return false;
    char next = at(token.size());
    if (next && not_before.find(next) != std::string_view::npos) return false;  // '/' of "//", '+' of "+="
    i_ += token.size();
    return true;
  }
  bool take_word(std::string_view w) {
    skip_space();
    if (t_.substr(i_, w.size()) != w || is_name_char(at(w.size()))) return false;
    i_ += w.size();
    return true;
  }
  void expect(std::string_view token) {
    if (!take(token)) syntax(loopkit::format("expected '{}'", token));
  }
  // what cannot continue an expression: jq's try and bindings are not read,
  // anything else jq could not parse either
  [[noreturn]] void unexpected() {
    if (at() == '?') fail("'?' (jq's try) is not read");
    if (take_word("as")) fail("'as' (jq's variables) is not read");
    syntax(loopkit::format("unexpected {}", quoted(t_.substr(i_, 1))));
  }

  NodePtr pipe() {
    if (++depth_ > max_nesting) fail(loopkit::format("nested deeper than {} levels", max_nesting));
    NodePtr n = comma();
    while (take("|", "=")) n = node(Node::pipe, 0, n, comma());
    --depth_;
    return n;
  }
  NodePtr comma() {
    NodePtr n = alt();
    while (take(",")) n = node(Node::comma, 0, n, alt());
    return n;
  }
  NodePtr alt() {
    NodePtr n = or_();
    skip_space();
    for (std::string_view a : {"|=", "+=", "-=", "*=", "/=", "%=", "//="})
      if (t_.substr(i_, a.size()) == a) fail(loopkit::format("jq's update '{}' is not read (state-set writes)", a));
    if (at() == '=' && at(1) != '=') fail("jq's assignment '=' is not read (state-set writes)");
    if (take("//", "=")) n = node(Node::alternative, 0, n, alt());
    return n;
  }
  NodePtr or_() {
    NodePtr n = and_();
    while (take_word("or")) n = node(Node::or_, 0, n, and_());
    return n;
  }
  NodePtr and_() {
    NodePtr n = cmp();
    while (take_word("and")) n = node(Node::and_, 0, n, cmp());
    return n;
  }
  char cmp_op() {
    if (take("==")) return '=';
    if (take("!=")) return '!';
    if (take("<=")) return 'l';
    if (take(">=")) return 'g';
    if (take("<")) return '<';
    if (take(">")) return '>';
    return 0;
  }
  NodePtr cmp() {
    std::size_t start = (skip_space(), i_);
    NodePtr n = sum();
    char op = cmp_op();
    if (!op) return n;
    n = spelled(node(Node::compare, op, n, sum()), start);
    std::size_t before = i_;
    if (cmp_op()) {
      i_ = before;
      syntax("comparisons do not chain (as in jq): group them with ( )");
    }
    return n;
  }
  NodePtr sum() {
    std::size_t start = (skip_space(), i_);
    NodePtr n = prod();
    for (;;) {
      if (take("+", "=")) n = spelled(node(Node::arith, '+', n, prod()), start);
      else if (take("-", "=")) n = spelled(node(Node::arith, '-', n, prod()), start);
      else return n;
    }
  }
  NodePtr prod() {
    std::size_t start = (skip_space(), i_);
    NodePtr n = unary();
    for (;;) {
      if (take("*", "=")) n = spelled(node(Node::arith, '*', n, unary()), start);
      else if (take("/", "/=")) n = spelled(node(Node::arith, '/', n, unary()), start);
      else if (take("%", "=")) n = spelled(node(Node::arith, '%', n, unary()), start);
      else return n;
    }
  }
  // n, an operator over what t_ holds from start on, with that text as a
  // loopkit(7) path beside it when it is one: .history.bd-001 (contract
  // section 2's bare names); never with white space (.a - 1)
  NodePtr spelled(NodePtr n, std::size_t start) {
    std::string_view text = t_.substr(start, i_ - start);
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n' || text.back() == '\r'))
      text.remove_suffix(1);  // what the operand's end skipped looking for more
    if (text.size() < 2 || text[0] != '.' || text.find_first_of(" \t\n\r#$") != std::string_view::npos) return n;
    try {
      Path p = parse_path(text);
      if (!p.has_all()) n->spelled = std::move(p);
    } catch (const Error&) {
    }
    return n;
  }
  // jq's '-' Exp binds as its binary '-': -a * b is -(a * b), -a + b is (-a) + b
  NodePtr unary() {
    if (take("-")) return negated([this] { return prod(); });
    std::size_t start = (skip_space(), i_);
    return suffixes(term(), start);
  }
  template <class F>
  NodePtr negated(F operand) {
    if (++depth_ > max_nesting) fail(loopkit::format("nested deeper than {} levels", max_nesting));
    NodePtr n = node(Node::negate, 0, operand());
    --depth_;
    return n;
  }
  // an object's value, jq's ExpD: terms (or -terms) joined by '|'; any other
  // operator there is a syntax error in jq too ({a: (.x // 1)} groups it)
  NodePtr object_value() {
    NodePtr n = object_term();
    while (take("|", "=")) n = node(Node::pipe, 0, n, object_term());
    return n;
  }
  NodePtr object_term() {
    if (take("-")) return negated([this] { return object_term(); });
    std::size_t start = (skip_space(), i_);
    return suffixes(term(), start);
  }

  NodePtr term() {
    if (++terms_ > max_terms) fail(loopkit::format("more than {} terms", max_terms));
    skip_space();
    if (i_ == t_.size()) syntax("expected a path, a literal, '{' or '(' at the end");
    char c = at();
    if (c == '.' && is_digit(at(1))) return number();
    if (c == '.' && at(1) == '.') fail("'..' (jq's recurse) is not read");
    if (c == '.') {
      ++i_;
      auto n = node(Node::path);
      if (is_name_start(at()) || at() == '"') --i_;  // the suffix reads .NAME and ."NAME"
      return n;
    }
    if (c == '{') return object();
    if (c == '[') return collect();
    if (c == '(') {
      ++i_;
      NodePtr n = pipe();
      expect(")");
      return n;
    }
    if (c == '"') return literal_string();
    if (is_digit(c)) return number();
    if (c == '$') return variable();
    if (c == '@') fail("jq's formats (@base64, ...) are not read");
    if (is_name_start(c)) return word();
    syntax(loopkit::format("unexpected {}", quoted(t_.substr(i_, 1))));
  }

  // .NAME, ."NAME", [..] and .[..] after a term: one path (from the term's
  // value when the term is not itself a path)
  NodePtr suffixes(NodePtr n, std::size_t start) {
    for (;;) {
      std::size_t before = i_;
      skip_space();
      Segment s{Segment::all, {}, 0};
      if (at() == '.' && is_name_start(at(1))) {
        std::size_t from = ++i_;
        while (is_name_char(at())) ++i_;
        s = {Segment::key, std::string(t_.substr(from, i_ - from)), 0};
      } else if (at() == '.' && at(1) == '"') {
        ++i_;
        s = {Segment::key, string_value(), 0};
      } else if (at() == '[' || (at() == '.' && at(1) == '[')) {
        if (at() == '.') ++i_;
        s = bracket();
      } else {
        i_ = before;
        break;
      }
      if (n->kind != Node::path) n = node(Node::path, 0, n);
      n->where.segments.push_back(std::move(s));
      if (n->where.segments.size() > json::max_depth)
        fail(loopkit::format("a path deeper than {} levels", json::max_depth));
    }
    if (n->kind == Node::path) n->where.text = std::string(t_.substr(start, i_ - start));
    return n;
  }

  Segment bracket() {
    ++i_;  // '['
    skip_space();
    Segment s{Segment::all, {}, 0};
    if (at() == '"') {
      s = {Segment::key, string_value(), 0};
    } else if (at() == '$') {
      s = {Segment::key, std::string(variable()->value.get_string()), 0};
    } else if (at() == '-' || is_digit(at())) {
      bool negative = at() == '-';
      if (negative) ++i_;
      if (!is_digit(at())) fail("an index that is not a number literal is not read");
      for (; is_digit(at()); ++i_) {
        if (s.index > 1000000000000000LL) fail("index too large");
        s.index = s.index * 10 + (at() - '0');
      }
      s.kind = Segment::elem;
      if (negative) s.index = -s.index;
    } else if (at() != ']') {
      fail("an index that is not a literal is not read");
    }
    if (!take("]")) fail("slices and computed indices are not read");
    return s;
  }

  // [A]: one array of A's values; [] the empty array
  NodePtr collect() {
    ++i_;  // '['
    NodePtr n = node(Node::collect);
    if (take("]")) return n;
    n->left = pipe();
    expect("]");
    return n;
  }

  NodePtr word() {
    std::size_t start = i_;
    while (is_name_char(at())) ++i_;
    std::string_view w = t_.substr(start, i_ - start);
    if (w == "true" || w == "false" || w == "null") return literal(json::parse(w, "expression"));
    if (w == "empty") return node(Node::empty);
    if (w == "not") return node(Node::not_);
    if (w == "select") {
      expect("(");
      NodePtr n = node(Node::select, 0, pipe());
      expect(")");
      return n;
    }
    for (std::string_view k : {"and", "or", "as", "then", "elif", "else", "end", "catch", "__loc__"})
      if (w == k) syntax(loopkit::format("unexpected '{}'", w));
    // jq rejects an unknown name when it compiles, giving the text no
    // meaning: a text that is also a loopkit path (.history.bd-old.status)
    // is that path
    syntax(
        loopkit::format("unknown function '{}' (paths, literals, [...], {{...}}, select, not, empty, | , // "
                        "and or, == != < <= > >=, + - * / % are read)",
                        w));
  }

  NodePtr literal(json::value v) {
    auto n = node(Node::literal);
    n->value = std::move(v);
    return n;
  }

  // jq's number: digits with an optional fraction, or .digits; an exponent
  NodePtr number() {
    std::size_t start = i_;
    std::string text;
    while (is_digit(at())) ++i_;
    std::string_view whole = t_.substr(start, i_ - start);
    whole.remove_prefix(std::min(whole.find_first_not_of('0'), whole.size()));
    text = whole.empty() ? "0" : std::string(whole);
    if (at() == '.') {
      std::size_t from = ++i_;
      while (is_digit(at())) ++i_;
      if (i_ > from) text += "." + std::string(t_.substr(from, i_ - from));
    }
    std::size_t e = (at(1) == '+' || at(1) == '-') ? 2 : 1;
    if ((at() == 'e' || at() == 'E') && is_digit(at(e))) {
      std::size_t from = i_;
      i_ += e;
      while (is_digit(at())) ++i_;
      text += std::string(t_.substr(from, i_ - from));
    }
    try {
      return literal(json::parse(text, "expression", {}, json::Literals::big_integers));
    } catch (const Error&) {
      fail(loopkit::format("not a number a reader takes: {}", t_.substr(start, i_ - start)));
    }
  }

  // a JSON string literal at i_, its value
  std::string string_value() {
    std::size_t start = i_++;
    while (i_ < t_.size() && t_[i_] != '"') {
      if (t_[i_] == '\\' && at(1) == '(') fail("string interpolation \\(...) is not read");
      i_ += t_[i_] == '\\' ? 2 : 1;
    }
    if (i_ >= t_.size()) syntax("unterminated string");
    ++i_;
    try {
      return std::string(json::parse(t_.substr(start, i_ - start), "expression").get_string());
    } catch (const Error&) {
      fail("bad escape or text that is not UTF-8 in a quoted name");
    }
  }
  NodePtr literal_string() { return literal(json::value(json::string(string_value()))); }

  // $NAME, defined with --arg: a string
  NodePtr variable() {
    std::size_t start = ++i_;
    while (is_name_char(at())) ++i_;
    std::string_view name = t_.substr(start, i_ - start);
    if (name.empty() || !is_name_start(name[0])) syntax("expected a variable name after '$'");
    auto v = path_variable(name);
    if (!v) fail(loopkit::format("undefined variable '${}' (define it with --arg {} VALUE)", name, name));
    return literal(json::value(json::string(*v)));
  }

  NodePtr object() {
    ++i_;  // '{'
    auto n = node(Node::object);
    if (take("}")) return n;
    do {
      skip_space();
      std::size_t start = i_;
      std::string key = member_name();
      NodePtr value;
      if (take(":")) {
        value = object_value();
      } else {
        // {name} is {name: .name}, {"a b"} is {"a b": .["a b"]}
        value = node(Node::path);
        value->where.segments.push_back({Segment::key, key, 0});
        value->where.text = "." + std::string(t_.substr(start, i_ - start));
      }
      n->members.emplace_back(std::move(key), std::move(value));
    } while (take(","));
    if (!take("}"))
      syntax("expected '}' (a member's value is a term or terms joined by '|', as in jq: group the rest in ( ))");
    return n;
  }
  std::string member_name() {
    if (at() == '"') return string_value();
    std::size_t start = i_;
    while (is_name_char(at())) ++i_;
    if (i_ == start || !is_name_start(t_[start])) fail("expected a member name after '{' or ','");
    return std::string(t_.substr(start, i_ - start));
  }
};

}  // namespace

Parsed try_parse(std::string_view text) {
  Parsed p;
  try {
    p.expression = Expression{Parser(text).whole(), std::string(text)};
  } catch (const Unread& u) {
    p.error = loopkit::format("malformed expression {}: {}", quoted(text), u.why);
    p.jq_cannot_read = u.syntax;
  }
  return p;
}

Expression parse(std::string_view text) {
  Parsed p = try_parse(text);
  if (!p.expression) fail_usage(p.error);
  return std::move(*p.expression);
}

const Path* only_path(const Expression& e) {
  return e.root->kind == Node::path && !e.root->left ? &e.root->where : nullptr;
}

const Path* spelled_path(const Expression& e) { return e.root->spelled ? &*e.root->spelled : nullptr; }

}  // namespace loopkit::query
