// nearest_double (core/json.hpp): a JSON number's text as the nearest double.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/json.hpp"

namespace loopkit::json {

namespace {
// Clinger's fast path: digits that, read as a whole number, stay within
// 2^53, and a power of ten within 10^22, are both exact doubles, and one
// multiplication or division rounds their product as strtod rounds the
// text. Most numbers take it; the others go to strtod (std::from_chars,
// its only user, was 90 KB of every tool).
std::optional<double> exact_quotient(std::string_view t) {
  static constexpr double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  std::size_t i = 0, n = t.size();
  bool negative = i < n && t[i] == '-';
  i += negative;
  std::uint64_t m = 0;
  int exp10 = 0, digits = 0;
  bool point = false;
  for (; i < n; ++i) {
    char c = t[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    if (++digits > 15) return std::nullopt;  // 10^15 < 2^53: no overflow check
    m = m * 10 + static_cast<unsigned>(c - '0');
    exp10 -= point;
  }
  if (digits == 0) return std::nullopt;
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    bool minus = ++i < n && t[i] == '-';
    if (i < n && (t[i] == '-' || t[i] == '+')) ++i;
    int e = 0;
    std::size_t from = i;
    for (; i < n && t[i] >= '0' && t[i] <= '9' && i - from < 4; ++i) e = e * 10 + (t[i] - '0');
    if (i == from) return std::nullopt;
    exp10 += minus ? -e : e;
  }
  if (i != n || exp10 < -22 || exp10 > 22) return std::nullopt;
  double d = static_cast<double>(m);
  d = exp10 < 0 ? d / pow10[-exp10] : d * pow10[exp10];
  return negative ? -d : d;
}
}  // namespace

double nearest_double(std::string_view t) {
  if (std::optional<double> d = exact_quotient(t)) return *d;
  return std::strtod(std::string(t).c_str(), nullptr);  // ±inf past the range, with the sign
}

}  // namespace loopkit::json
