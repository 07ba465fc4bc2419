// Equality of JSON values as --expect and --require mean it: numbers by
// value, whatever their spelling or the type a parser chose for them.
#include <string>
#include <string_view>

#include "core/json/json.hpp"

namespace loopkit::json {

namespace {

// A number text as sign, significant digits and the exponent of the last
// one: 1e2, 100, 100.0 and 0.1e3 are all {+, "1", 2}; every zero is one.
struct Decimal {
  bool negative = false;
  std::string digits;
  long long exponent = 0;
  bool operator==(const Decimal&) const = default;
};

Decimal decimal(std::string_view t) {
  Decimal d;
  std::size_t i = 0;
  if (i < t.size() && t[i] == '-') d.negative = true, ++i;
  long long point = 0;  // digits after the decimal point
  bool after_point = false;
  for (; i < t.size() && t[i] != 'e' && t[i] != 'E'; ++i) {
    if (t[i] == '.') {
      after_point = true;
      continue;
    }
    if (after_point) ++point;
    if (d.digits.empty() && t[i] == '0') continue;  // leading zeros
    d.digits += t[i];
  }
  // digits dropped as leading zeros after the point still count in `point`
  long long exp = 0;
  if (i < t.size()) {
    ++i;
    bool neg = false;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) neg = t[i++] == '-';
    for (; i < t.size(); ++i)
      if (exp < 1'000'000'000) exp = exp * 10 + (t[i] - '0');  // saturates: such texts never reach a value
    if (neg) exp = -exp;
  }
  if (d.digits.empty()) return Decimal{};  // zero, of either sign
  std::size_t last = d.digits.find_last_not_of('0');
  d.exponent = exp - point + static_cast<long long>(d.digits.size() - 1 - last);
  d.digits.resize(last + 1);
  return d;
}

}  // namespace

bool equal(const value& a, const value& b) {
  if (is_numeric(a) || is_numeric(b))
    return is_numeric(a) && is_numeric(b) && decimal(number_text(a)) == decimal(number_text(b));
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const auto &x = a.get_array(), &y = b.get_array();
    if (x.size() != y.size()) return false;
    // parse bounds nesting by max_depth, so this recursion is bounded too
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!equal(x[i], y[i])) return false;
    return true;
  }
  if (a.is_object()) {
    const auto &x = a.get_object(), &y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& kv : x) {
      const value* other = y.if_contains(kv.key());
      if (!other || !equal(kv.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace loopkit::json
