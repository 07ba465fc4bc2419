#include "sys/base/decimal.hpp"

#include <cmath>
#include <cstddef>

namespace loopkit {

namespace {
constexpr double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                            1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr std::uint64_t mantissa_limit = 1000000000000000000ULL;  // 10^18: one more digit fits
constexpr std::int64_t exponent_cap = 100000000000000000;         // 10^17: e * 10 + 9 fits, past any text

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The digits of the mantissa at text[i], into d; the index after them.
std::size_t read_mantissa(std::string_view t, std::size_t i, Decimal& d, bool& any) {
  bool point = false;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (!is_digit(c)) break;
    any = true;
    if (d.mantissa == 0 && c == '0') {
      d.exp10 -= point;  // a leading zero: only its place counts
    } else if (d.mantissa < mantissa_limit) {
      d.mantissa = d.mantissa * 10 + std::uint64_t(c - '0');
      d.exp10 -= point;
      ++d.digits;
    } else {
      d.exp10 += !point;
      d.dropped |= c != '0';
    }
  }
  return i;
}
}  // namespace

std::optional<Decimal> read_decimal(std::string_view t) {
  Decimal d;
  std::size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) d.negative = t[i++] == '-';
  bool any = false;
  i = read_mantissa(t, i, d, any);
  if (!any) return std::nullopt;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    bool minus = ++i < t.size() && t[i] == '-';
    if (i < t.size() && (t[i] == '-' || t[i] == '+')) ++i;
    if (i == t.size() || !is_digit(t[i])) return std::nullopt;
    std::int64_t e = 0;
    for (; i < t.size() && is_digit(t[i]); ++i)
      if (e < exponent_cap) e = e * 10 + (t[i] - '0');
    d.exp10 += minus ? -e : e;
  }
  if (i != t.size()) return std::nullopt;
  if (d.mantissa == 0) d.exp10 = 0;
  return d;
}

std::optional<double> Decimal::exact() const {
  if (dropped || mantissa > (std::uint64_t(1) << 53) || exp10 < -22 || exp10 > 22) return std::nullopt;
  double v = double(mantissa);
  v = exp10 < 0 ? v / pow10[-exp10] : v * pow10[exp10];
  return negative ? -v : v;
}

// Scaled in long double (64 bits of mantissa: 19 digits and each power of
// ten up to 10^27 exact, a few roundings of 2^-64 each), then rounded once
// to double: within a unit in the last place.
double Decimal::approximate() const {
  if (auto v = exact()) return *v;
  // 1 <= mantissa < 10^19: past these it is infinity or zero whatever it is
  if (exp10 > 309) return negative ? -HUGE_VAL : HUGE_VAL;
  if (exp10 < -360) return negative ? -0.0 : 0.0;
  long double v = static_cast<long double>(mantissa);
  std::int64_t e = exp10;
  for (; e > 27; e -= 27) v *= 1e27L;
  for (; e < -27; e += 27) v /= 1e27L;
  long double scale = 1;
  for (std::int64_t k = e < 0 ? -e : e; k > 0; --k) scale *= 10;
  v = e < 0 ? v / scale : v * scale;
  double d = static_cast<double>(v);
  return negative ? -d : d;
}

// Digit by digit, not by read_nearest_double: the lock and event tools
// validate numbers without carrying its bignum (8 KB more in bin/).
bool is_finite_json_number(std::string_view t) {
  // 2^1024 - 2^970, the least value strtod rounds to infinity, in full
  static constexpr std::string_view limit =
      "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286"
      "416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571"
      "366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
  std::optional<Decimal> d = read_decimal(t);
  if (!d || d->mantissa == 0) return true;
  const std::int64_t top = d->exp10 + d->digits - 1;  // the power of ten of the first significant digit
  if (top != 308) return top < 308;
  std::size_t k = 0;  // the limit's digits matched so far
  for (char c : t) {
    if (c == 'e' || c == 'E') break;
    if (!is_digit(c) || (k == 0 && c == '0')) continue;
    if (k == limit.size()) {
      if (c != '0') return false;
      continue;
    }
    if (c != limit[k]) return c < limit[k];
    ++k;
  }
  return k < limit.size();  // fewer digits: below it (it ends in 2); all of them: a tie, infinity
}

}  // namespace loopkit
