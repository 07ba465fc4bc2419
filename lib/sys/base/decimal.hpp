// Decimal numbers read without strtod: glibc's strtod and the strncasecmp
// behind its "inf" and "nan" are 37 KB of every static tool that calls it
// (issue 24). Options take the approximation; JSON numbers the exact
// double, from the fast path or decided with a small bignum.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace loopkit {

// [+-]DIGITS[.DIGITS][(e|E)[+-]DIGITS], where either digit run of the
// mantissa may be empty but not both ("5.", ".5"): a JSON number, or an
// option's value. Its first 19 significant digits are kept exactly.
struct Decimal {
  bool negative = false;
  std::uint64_t mantissa = 0;  // at most 19 digits
  std::int64_t exp10 = 0;      // value = mantissa * 10^exp10, but for dropped digits
  bool dropped = false;        // digits past the 19th were not zeros
  int digits = 0;              // significant digits in mantissa
  // The double nearest the text, where Clinger's fast path knows it (a
  // mantissa within 2^53 and a power of ten within 10^22: both exact, one
  // multiplication or division rounds as strtod rounds the text).
  std::optional<double> exact() const;
  // Within a unit in the last place of the nearest double (±inf past the
  // range, 0 below it): enough for seconds and counts, not for a JSON value.
  double approximate() const;
};
std::optional<Decimal> read_decimal(std::string_view text);

// The double nearest a text of read_decimal's grammar, as strtod rounds
// it: a tie to the even mantissa, ±inf past the range and ±0 below it,
// subnormals exact, whatever the number of digits. Clinger's fast path,
// else the approximation corrected against the exact midpoints (a
// bignum of the first 800 significant digits, the rest only as "not 0").
std::optional<double> read_nearest_double(std::string_view text);

// Whether a valid JSON number's text names a finite double, as strtod
// would round it: below 2^1024 - 2^970 (a tie rounds to even: infinity).
bool is_finite_json_number(std::string_view text);

}  // namespace loopkit
