#include "core/edit/edit_rules.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::edit_rules {

std::optional<std::size_t> landing(long long index, std::size_t n, bool past_end) {
  long long size = static_cast<long long>(n);
  long long i = index < 0 ? size + index : index;
  if (i < 0 || i > size || (i == size && !past_end)) return std::nullopt;
  return static_cast<std::size_t>(i);
}

void cannot_set_member(const Path& p, std::size_t at, const char* type_in_way) {
  fail_data(loopkit::format("{}: cannot set {} in {} at {}", p.text, json::quote(p.segments[at].name),
                            with_article(type_in_way), quoted(path_prefix_text(p, at))));
}

void cannot_index(const Path& p, std::size_t at, const char* type_in_way) {
  fail_data(
      loopkit::format("{}: cannot index {} at {}", p.text, with_article(type_in_way), quoted(path_prefix_text(p, at))));
}

void index_out_of_range(const Path& p, long long index, std::size_t n) {
  fail_data(loopkit::format("{}: index {} is out of range for an array of {}", p.text, index, n));
}

void all_names_many(const Path& p) {
  fail_usage(loopkit::format("malformed path {}: '[]' names many values; it is for readers only", quoted(p.text)));
}

void cannot_delete_through(const Path& p, const char* type_in_way) {
  fail_data(loopkit::format("{}: cannot delete through {}", p.text, with_article(type_in_way)));
}

void cannot_delete_in(const Path& p, const char* type_in_way) {
  bool member = p.segments.back().kind == Segment::key;
  fail_data(loopkit::format("{}: cannot delete {} of {}", p.text, member ? "a member" : "an element",
                            with_article(type_in_way)));
}

void cannot_change(const Path& p, const char* verb, const char* type) {
  fail_data(loopkit::format("{}: cannot {} {}", p.text, verb, with_article(type)));
}

void cannot_compute(const Path& p, char op, const char* type) {
  const char* verb = op == '-'   ? "subtract from"
                     : op == '*' ? "multiply"
                     : op == '/' ? "divide"
                                 : "take the remainder of";
  fail_data(loopkit::format("{}: cannot {} {} ({}= takes a number)", p.text, verb, with_article(type), op));
}

// ---- the arithmetic of += --------------------------------------------------------

namespace {

// A JSON number as digits: (-1)^negative * digits * 10^exponent, digits
// without leading zeros ("" for zero).
struct Decimal {
  bool negative = false;
  std::string digits;
  long long exponent = 0;
};

Decimal decimal_of(std::string_view t) {
  Decimal d;
  std::size_t i = 0;
  if (i < t.size() && t[i] == '-') d.negative = true, ++i;
  bool fraction = false;
  for (; i < t.size() && t[i] != 'e' && t[i] != 'E'; ++i) {
    if (t[i] == '.') {
      fraction = true;
      continue;
    }
    if (t[i] != '0' || !d.digits.empty()) d.digits += t[i];
    if (fraction) --d.exponent;
  }
  if (i + 1 < t.size()) {  // the exponent, saturated: 1e-999999999999 is only far away
    bool minus = t[i + 1] == '-';
    long long e = 0;
    for (std::size_t j = i + 1; j < t.size(); ++j)
      if (t[j] >= '0' && t[j] <= '9') e = std::min(e * 10 + (t[j] - '0'), 1'000'000'000'000LL);
    d.exponent += minus ? -e : e;
  }
  return d;
}

// |a| - |b| or |a| + |b| on digit strings of one length, most significant first
std::string add_digits(const std::string& a, const std::string& b, bool subtract) {
  std::string out(a.size(), '0');
  int carry = 0;
  for (std::size_t k = a.size(); k-- > 0;) {
    int v = subtract ? (a[k] - '0') - (b[k] - '0') - carry : (a[k] - '0') + (b[k] - '0') + carry;
    carry = subtract ? v < 0 : v > 9;
    out[k] = static_cast<char>('0' + (subtract ? (v + 10) % 10 : v % 10));
  }
  if (carry) out.insert(out.begin(), '1');
  return out;
}

// JSON text of digits * 10^exponent: plain where a person writes it so
// (0.3, 1500), else d.ddde+XX as doubles are written
std::string decimal_text(bool negative, const std::string& digits, long long exponent) {
  if (digits.empty()) return "0";
  long long n = static_cast<long long>(digits.size()), lead = n - 1 + exponent;
  std::string s(negative ? "-" : "");
  if (exponent >= 0 && lead < 21) {
    s.append(digits).append(static_cast<std::size_t>(exponent), '0');
  } else if (exponent < 0 && lead < 0 && lead >= -6) {
    s.append("0.").append(static_cast<std::size_t>(-lead - 1), '0').append(digits);
  } else if (exponent < 0 && lead >= 0) {
    auto point = static_cast<std::size_t>(lead + 1);
    s.append(digits, 0, point).append(1, '.').append(digits, point);
  } else {
    s.append(1, digits[0]);
    if (n > 1) s.append(1, '.').append(digits, 1);
    s.append(loopkit::format("e{}{:02}", lead < 0 ? '-' : '+', lead < 0 ? -lead : lead));
  }
  return s;
}

}  // namespace

std::optional<std::string> decimal_sum(std::string_view a_text, std::string_view b_text) {
  Decimal a = decimal_of(a_text), b = decimal_of(b_text);
  if (a.digits.empty()) std::swap(a, b);
  if (b.digits.empty()) {
    if (a.digits.size() > max_digits) return std::nullopt;
    return decimal_text(a.negative && !a.digits.empty(), a.digits, a.exponent);
  }
  // both aligned on the lower of the two last digits; a wide spread cannot
  // give a sum of max_digits digits (nothing cancels but the top digit)
  long long low = std::min(a.exponent, b.exponent);
  long long high = std::max(a.exponent + static_cast<long long>(a.digits.size()),
                            b.exponent + static_cast<long long>(b.digits.size()));
  if (high - low > static_cast<long long>(2 * max_digits + 2)) return std::nullopt;
  auto aligned = [&](const Decimal& d) {
    std::string s(static_cast<std::size_t>(high - d.exponent - static_cast<long long>(d.digits.size())), '0');
    return s + d.digits + std::string(static_cast<std::size_t>(d.exponent - low), '0');
  };
  std::string x = aligned(a), y = aligned(b);
  bool negative = a.negative;
  bool subtract = a.negative != b.negative;
  if (subtract && x < y) std::swap(x, y), negative = b.negative;  // same length: the string order is the value's
  std::string sum = add_digits(x, y, subtract);
  long long exponent = low;
  sum.erase(0, std::min(sum.find_first_not_of('0'), sum.size()));
  while (!sum.empty() && sum.back() == '0') sum.pop_back(), ++exponent;
  if (sum.size() > max_digits) return std::nullopt;
  return decimal_text(negative && !sum.empty(), sum, exponent);
}

namespace {

void trim(Decimal& d) {
  while (!d.digits.empty() && d.digits.back() == '0') d.digits.pop_back(), ++d.exponent;
}

std::string strip_leading(std::string s) {
  s.erase(0, std::min(s.find_first_not_of('0'), s.size()));
  return s;
}

// unsigned digit strings without leading zeros ("" is zero)
int compare_digits(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  int c = a.compare(b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

std::string minus_digits(const std::string& a, const std::string& b) {  // a >= b
  return strip_leading(add_digits(a, std::string(a.size() - b.size(), '0') + b, true));
}

// n / d by long division (d not zero): the quotient and the remainder
std::pair<std::string, std::string> divide_digits(std::string_view n, const std::string& d) {
  std::string q, r;
  for (char c : n) {
    if (!r.empty() || c != '0') r += c;
    int digit = 0;
    for (; compare_digits(r, d) >= 0; ++digit) r = minus_digits(r, d);
    if (!q.empty() || digit) q += static_cast<char>('0' + digit);
  }
  return {q, r};
}

// |d| truncated to an integer, as digits
std::string integer_part(const Decimal& d) {
  // a finite double has fewer than 400 integer digits; a text that claims
  // more is no number a reader accepted
  if (d.exponent > 400) fail_data("a number out of range in an integer operation");
  if (d.exponent >= 0) return d.digits.empty() ? "" : d.digits + std::string(static_cast<std::size_t>(d.exponent), '0');
  long long keep = static_cast<long long>(d.digits.size()) + d.exponent;
  return keep <= 0 ? "" : strip_leading(d.digits.substr(0, static_cast<std::size_t>(keep)));
}

}  // namespace

std::optional<std::string> decimal_product(std::string_view a_text, std::string_view b_text) {
  Decimal a = decimal_of(a_text), b = decimal_of(b_text);
  trim(a), trim(b);
  if (a.digits.empty() || b.digits.empty()) return "0";
  // the zeros that 2s and 5s make at the end are the only way back to
  // max_digits: a valid number's digits are far fewer than this bound
  if (a.digits.size() * b.digits.size() > 4000000) return std::nullopt;
  std::vector<int> acc(a.digits.size() + b.digits.size(), 0);
  for (std::size_t i = 0; i < a.digits.size(); ++i)
    for (std::size_t j = 0; j < b.digits.size(); ++j) acc[i + j + 1] += (a.digits[i] - '0') * (b.digits[j] - '0');
  for (std::size_t k = acc.size() - 1; k > 0; --k) acc[k - 1] += acc[k] / 10, acc[k] %= 10;
  Decimal p{a.negative != b.negative, "", a.exponent + b.exponent};
  for (int v : acc) p.digits += static_cast<char>('0' + v);
  p.digits = strip_leading(p.digits);
  trim(p);
  if (p.digits.size() > max_digits) return std::nullopt;
  return decimal_text(p.negative, p.digits, p.exponent);
}

std::optional<std::string> decimal_quotient(std::string_view a_text, std::string_view b_text) {
  Decimal a = decimal_of(a_text), b = decimal_of(b_text);
  trim(a), trim(b);
  if (b.digits.empty()) return std::nullopt;
  if (a.digits.empty()) return "0";
  // A * 10^k / B has at least max_digits + 1 digits: the last one rounds
  long long k = std::max<long long>(
      0, static_cast<long long>(max_digits + 1 + b.digits.size()) - static_cast<long long>(a.digits.size()));
  auto [q, r] = divide_digits(a.digits + std::string(static_cast<std::size_t>(k), '0'), b.digits);
  Decimal d{a.negative != b.negative, q, a.exponent - b.exponent - k};
  if (r.empty()) trim(d);
  if (d.digits.size() > max_digits) {  // half to even, as decimal128 rounds
    char first = d.digits[max_digits];
    bool beyond = !r.empty() || d.digits.find_first_not_of('0', max_digits + 1) != std::string::npos;
    d.exponent += static_cast<long long>(d.digits.size() - max_digits);
    d.digits.resize(max_digits);
    if (first > '5' || (first == '5' && (beyond || (d.digits.back() - '0') % 2)))
      d.digits = add_digits(d.digits, std::string(max_digits - 1, '0') + "1", false);
    trim(d);
  }
  return decimal_text(d.negative, d.digits, d.exponent);
}

std::optional<std::string> integer_remainder(std::string_view a_text, std::string_view b_text) {
  Decimal a = decimal_of(a_text), b = decimal_of(b_text);
  trim(a), trim(b);
  std::string x = integer_part(a), y = integer_part(b);
  if (y.empty()) return std::nullopt;
  std::string r = divide_digits(x, y).second;  // C's %: the dividend's sign
  return r.empty() ? "0" : (a.negative ? "-" : "") + r;
}

namespace {

std::string int128_text(__int128 v) {
  bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  do {
    s += static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u);
  if (negative) s += '-';
  return {s.rbegin(), s.rend()};
}

// an integer's text of up to 37 digits (two of them add in 128 bits)
std::optional<__int128> small_integer(std::string_view t) {
  bool negative = !t.empty() && t[0] == '-';
  std::string_view digits = t.substr(negative ? 1 : 0);
  if (digits.empty() || digits.size() > 37 || digits.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  __int128 i = 0;
  for (char c : digits) i = i * 10 + (c - '0');
  return negative ? -i : i;
}

}  // namespace

json::value number_sum(const json::value& a, const json::value& b, const Path& where) {
  std::string x = json::number_text(a), y = json::number_text(b);
  auto i = small_integer(x), j = small_integer(y);
  if (i && j) {
    __int128 s = *i + *j;
    if (s >= INT64_MIN && s <= INT64_MAX) return static_cast<int64_t>(s);
    if (s >= 0 && s <= static_cast<__int128>(UINT64_MAX)) return static_cast<uint64_t>(s);
    return json::number_literal(int128_text(s));  // exact, as jq 1.7 keeps big literals
  }
  std::optional<std::string> exact = decimal_sum(x, y);
  // a sum past a double's range could not be read back, exact or not
  double s = exact ? json::nearest_double(*exact) : json::nearest_double(x) + json::nearest_double(y);
  if (!std::isfinite(s)) fail_data(loopkit::format("{}: the sum overflows a double", where.text));
  if (exact) return json::number_literal(*exact);
  return s;
}

json::value number_op(char op, const json::value& a, const json::value& b, const Path& where) {
  std::string x = json::number_text(a), y = json::number_text(b);
  if (op == '-') return number_sum(a, json::number_literal(y[0] == '-' ? y.substr(1) : "-" + y), where);
  std::optional<std::string> exact;
  double approx = 0;
  if (op == '*') {
    exact = decimal_product(x, y);
    if (!exact) approx = json::nearest_double(x) * json::nearest_double(y);
  } else {
    exact = op == '/' ? decimal_quotient(x, y) : integer_remainder(x, y);
    if (!exact) fail_data(loopkit::format("{}: {} cannot be divided by {}: the divisor is zero", where.text, x, y));
  }
  double v = exact ? json::nearest_double(*exact) : approx;
  if (!std::isfinite(v)) fail_data(loopkit::format("{}: the result overflows a double", where.text));
  if (!exact) return v;
  if (auto i = small_integer(*exact); i && *i >= INT64_MIN && *i <= INT64_MAX) return static_cast<int64_t>(*i);
  return json::number_literal(*exact);
}

}  // namespace loopkit::edit_rules
