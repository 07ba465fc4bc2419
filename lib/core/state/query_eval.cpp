// The evaluation of a parsed jq expression (query_node.hpp) on a document,
// with jq 1.6's semantics: its order of values, its truth (null and false
// are false), its ordering of values and its operators on each type.
#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

#include "core/state/query.hpp"
#include "core/state/query_node.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::query {

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

// ---- jq's values: order and operators --------------------------------------

// jq's order of kinds: null < false < true < numbers < strings < arrays < objects
int rank(const json::value& v) {
  if (v.is_null()) return 0;
  if (v.is_bool()) return v.get_bool() ? 2 : 1;
  if (json::is_numeric(v)) return 3;
  if (v.is_string()) return 4;
  return v.is_array() ? 5 : 6;
}

double number_of(const json::value& v) { return json::nearest_double(json::number_text(v)); }

std::vector<std::string_view> sorted_keys(const json::object& o) {
  std::vector<std::string_view> keys;
  for (const auto& kv : o) keys.push_back(kv.key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

// jq's jv_cmp: numbers by value, strings by bytes, arrays element by
// element, objects by their sorted keys, then their values in that order
int order(const json::value& a, const json::value& b) {
  int ka = rank(a), kb = rank(b);
  if (ka != kb) return ka < kb ? -1 : 1;
  if (ka == 3) {
    double x = number_of(a), y = number_of(b);
    return x < y ? -1 : x == y ? 0 : 1;
  }
  if (ka == 4) {
    int c = std::string_view(a.get_string()).compare(std::string_view(b.get_string()));
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (ka == 5) {
    const auto &x = a.get_array(), &y = b.get_array();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (int c = order(x[i], y[i])) return c;
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  if (ka == 6) {
    auto kx = sorted_keys(a.get_object()), ky = sorted_keys(b.get_object());
    if (kx != ky) return std::lexicographical_compare(kx.begin(), kx.end(), ky.begin(), ky.end()) ? -1 : 1;
    for (auto k : kx)
      if (int c = order(a.get_object().at(k), b.get_object().at(k))) return c;
  }
  return 0;
}

bool compared(char op, const json::value& l, const json::value& r) {
  int c = order(l, r);
  switch (op) {
    case '=': return c == 0;
    case '!': return c != 0;
    case '<': return c < 0;
    case 'l': return c <= 0;
    case '>': return c > 0;
    default: return c >= 0;
  }
}

// a value as jq's messages show it: its JSON, cut at 11 bytes
std::string brief(const json::value& v) {
  std::string s = json::compact(v);
  return s.size() > 11 ? s.substr(0, 11) + "..." : s;
}

[[noreturn]] void cannot(const json::value& a, const json::value& b, const char* done) {
  fail_data(loopkit::format("{} ({}) and {} ({}) cannot be {}", type_name(a), brief(a), type_name(b), brief(b), done));
}

json::value number(double d) {
  if (!std::isfinite(d)) fail_data("a result past the range of a double");
  return json::value(d);
}

// jq's * of objects: members that are objects on both sides merged again
json::value merged(const json::value& a, const json::value& b) {
  json::object out = a.get_object();
  for (const auto& [k, v] : b.get_object()) {
    auto* have = out.if_contains(k);
    if (have && have->is_object() && v.is_object()) *have = merged(*have, v);
    else out[k] = v;
  }
  return out;
}

// jq 1.6's string * number: n - 1 more copies; null when fewer than one
json::value repeated(const json::value& s, double n) {
  double more = n - 1;
  if (!(more > -2147483649.0 && more < 2147483648.0) || more <= -1) return nullptr;
  auto copies = static_cast<std::size_t>(static_cast<int>(more)) + 1;
  std::string_view one = s.get_string();
  if (one.size() * copies > (std::size_t{1} << 28)) fail_data("string * number: the string would pass 256 MiB");
  std::string out;
  for (std::size_t i = 0; i < copies; ++i) out += one;
  return json::string(out);
}

json::value split(std::string_view s, std::string_view by) {
  json::array out;
  if (s.empty()) return out;
  if (by.empty()) {  // one string per character
    for (std::size_t i = 0; i < s.size();) {
      std::size_t n = 1;
      while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
      out.emplace_back(json::string(s.substr(i, n)));
      i += n;
    }
    return out;
  }
  for (std::size_t from = 0;;) {
    std::size_t at = s.find(by, from);
    out.emplace_back(json::string(s.substr(from, at == std::string_view::npos ? std::string_view::npos : at - from)));
    if (at == std::string_view::npos) return out;
    from = at + by.size();
  }
}

// jq 1.7's integer of a double for %: clamped (1.6 left it undefined)
long long to_integer(double d) {
  if (d <= static_cast<double>(LLONG_MIN)) return LLONG_MIN;
  if (d >= static_cast<double>(LLONG_MAX)) return LLONG_MAX;
  return static_cast<long long>(d);
}

json::value arithmetic(char op, const json::value& a, const json::value& b) {
  bool numbers = json::is_numeric(a) && json::is_numeric(b);
  switch (op) {
    case '+':
      if (a.is_null()) return b;
      if (b.is_null()) return a;
      if (numbers) return number(number_of(a) + number_of(b));
      if (a.is_string() && b.is_string())
        return json::string(std::string(a.get_string()) + std::string(b.get_string()));
      if (a.is_array() && b.is_array()) {
        json::array out = a.get_array();
        for (const auto& v : b.get_array()) out.push_back(v);
        return out;
      }
      if (a.is_object() && b.is_object()) {
        json::object out = a.get_object();
        for (const auto& [k, v] : b.get_object()) out[k] = v;
        return out;
      }
      cannot(a, b, "added");
    case '-':
      if (numbers) return number(number_of(a) - number_of(b));
      if (a.is_array() && b.is_array()) {
        json::array out;
        for (const auto& v : a.get_array())
          if (std::none_of(b.get_array().begin(), b.get_array().end(),
                           [&](const json::value& w) { return order(v, w) == 0; }))
            out.push_back(v);
        return out;
      }
      cannot(a, b, "subtracted");
    case '*':
      if (numbers) return number(number_of(a) * number_of(b));
      if (a.is_object() && b.is_object()) return merged(a, b);
      if (a.is_string() && json::is_numeric(b)) return repeated(a, number_of(b));
      if (json::is_numeric(a) && b.is_string()) return repeated(b, number_of(a));
      cannot(a, b, "multiplied");
    case '/':
      if (numbers && number_of(b) == 0) cannot(a, b, "divided because the divisor is zero");
      if (numbers) return number(number_of(a) / number_of(b));
      if (a.is_string() && b.is_string()) return split(a.get_string(), b.get_string());
      cannot(a, b, "divided");
    default: {
      if (!numbers) cannot(a, b, "divided (remainder)");
      long long x = to_integer(number_of(a)), y = to_integer(number_of(b));
      if (y == 0) cannot(a, b, "divided (remainder) because the divisor is zero");
      return static_cast<int64_t>(y == -1 ? 0 : x % y);
    }
  }
}

// ---- evaluation ------------------------------------------------------------

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

// A op B: jq takes B's values as the outer loop, A's inside.
void jq_binary(const Node& n, const json::value& in, const Out& out) {
  eval(*n.right, in, [&](const json::value& r) {
    eval(*n.left, in, [&](const json::value& l) {
      out(n.kind == Node::compare ? json::value(compared(n.op, l, r)) : arithmetic(n.op, l, r));
    });
  });
}

// The value at p in v when every member and element on the way is there
const json::value* held_at(const Path& p, const json::value& v) {
  const json::value* at = &v;
  for (const Segment& s : p.segments) {
    if (s.kind == Segment::key && at->is_object()) {
      at = at->get_object().if_contains(s.name);
    } else if (s.kind == Segment::elem && at->is_array()) {
      const auto& a = at->get_array();
      long long i = s.index < 0 ? s.index + static_cast<long long>(a.size()) : s.index;
      at = i >= 0 && i < static_cast<long long>(a.size()) ? &a[i] : nullptr;
    } else {
      return nullptr;
    }
    if (!at) return nullptr;
  }
  return at;
}

// jq's A op B; where that is an error and the text is also a loopkit path
// (.history.bd-001: jq's .history.bd - 1), the member the path names when
// the input holds it (contract section 2: bead ids as member names)
void binary(const Node& n, const json::value& in, const Out& out) {
  if (!n.spelled) return jq_binary(n, in, out);
  std::vector<json::value> values;
  try {
    jq_binary(n, in, [&](const json::value& v) { values.push_back(v); });
  } catch (const Error& e) {
    const json::value* held = e.code() == Exit::data ? held_at(*n.spelled, in) : nullptr;
    if (!held) throw;
    return out(*held);
  }
  for (const auto& v : values) out(v);
}

// A and B, A or B: A's values the outer loop; B only where A does not decide
void logic(const Node& n, const json::value& in, const Out& out) {
  bool is_and = n.kind == Node::and_;
  eval(*n.left, in, [&](const json::value& l) {
    if (truthy(l) != is_and) return out(json::value(!is_and));
    eval(*n.right, in, [&](const json::value& r) { out(json::value(truthy(r))); });
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
    case Node::path:
      if (n.left) return eval(*n.left, in, [&](const json::value& v) { walk(n.where, 0, v, out); });
      return walk(n.where, 0, in, out);
    case Node::literal: return out(n.value);
    case Node::empty: return;
    case Node::object: return build(n, 0, json::object(), in, out);
    case Node::pipe: return eval(*n.left, in, [&](const json::value& v) { eval(*n.right, v, out); });
    case Node::comma: eval(*n.left, in, out); return eval(*n.right, in, out);
    case Node::alternative: return alternative(n, in, out);
    case Node::compare:
    case Node::arith: return binary(n, in, out);
    case Node::and_:
    case Node::or_: return logic(n, in, out);
    case Node::not_: return out(json::value(!truthy(in)));
    case Node::negate:
      return eval(*n.left, in, [&](const json::value& v) {
        if (!json::is_numeric(v)) fail_data(loopkit::format("{} ({}) cannot be negated", type_name(v), brief(v)));
        out(number(-number_of(v)));
      });
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
