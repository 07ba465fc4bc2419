// read_nearest_double (sys/base/decimal.hpp): a decimal text's nearest double,
// decided exactly with a small bignum instead of strtod (issue 24).
#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sys/base/decimal.hpp"

namespace loopkit {

namespace {
// A halfway point between two doubles has at most 767 significant digits:
// past 800 a digit can only tip a tie, so the rest is kept as "not zero".
constexpr int max_digits = 800;
constexpr std::uint64_t pow5_27 = 7450580596923828125ULL;    // 5^27: the largest power of five in 64 bits
constexpr std::uint64_t pow10_19 = 10000000000000000000ULL;  // 10^19
constexpr std::uint64_t infinity_bits = 0x7FF0000000000000ULL;

// A natural number in 64-bit limbs, least significant first. 48 limbs
// hold the largest number compared, 43 of them: 800 digits (2658 bits) or
// 5^1124 times a 54-bit midpoint (2664), shifted to the other's power of 2
// (within a few bits of it, as the two sides are within a unit or so).
struct Big {
  std::uint64_t limb[48];
  int size = 0;  // no zero limb on top

  Big() = default;
  Big(const Big& b) : size(b.size) {  // the limbs in use only
    for (int i = 0; i < size; ++i) limb[i] = b.limb[i];
  }
  Big& operator=(const Big&) = delete;

  void multiply_add(std::uint64_t m, std::uint64_t add) {
    unsigned __int128 carry = add;
    for (int i = 0; i < size; ++i) {
      carry += static_cast<unsigned __int128>(limb[i]) * m;
      limb[i] = static_cast<std::uint64_t>(carry);
      carry >>= 64;
    }
    if (carry != 0) limb[size++] = static_cast<std::uint64_t>(carry);
  }
  void multiply_pow5(std::int64_t n) {
    for (; n >= 27; n -= 27) multiply_add(pow5_27, 0);
    std::uint64_t p = 1;
    for (; n > 0; --n) p *= 5;
    multiply_add(p, 0);
  }
  void shift_left(std::int64_t bits) {
    if (size == 0) return;
    const int words = static_cast<int>(bits / 64), b = static_cast<int>(bits % 64);
    limb[size + words] = 0;
    for (int i = size - 1; i >= 0; --i) {
      if (b != 0) limb[i + words + 1] |= limb[i] >> (64 - b);
      limb[i + words] = limb[i] << b;
    }
    for (int i = 0; i < words; ++i) limb[i] = 0;
    size += words + 1;
    if (limb[size - 1] == 0) --size;
  }
};

int compare(const Big& a, const Big& b) {
  if (a.size != b.size) return a.size < b.size ? -1 : 1;
  for (int i = a.size - 1; i >= 0; --i)
    if (a.limb[i] != b.limb[i]) return a.limb[i] < b.limb[i] ? -1 : 1;
  return 0;
}

// The value x * 2^e2 / y exactly (y = 5^-e10 for a negative power of ten,
// else 1), but for the digits past max_digits: sticky if any was not 0.
struct Exact {
  Big x, y;
  std::int64_t e2 = 0;
  bool sticky = false;
};

// The significant digits of a number's text (up to its exponent) into
// v.x, 19 at a time; how many were kept.
int read_digits(std::string_view t, Exact& v) {
  std::uint64_t chunk = 0, scale = 1;
  int n = 0;
  for (char c : t) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9' || (n == 0 && c == '0')) continue;  // sign, point, leading zeros
    if (n == max_digits) {
      v.sticky |= c != '0';
      continue;
    }
    chunk = chunk * 10 + std::uint64_t(c - '0'), scale *= 10, ++n;
    if (n % 19 == 0) v.x.multiply_add(pow10_19, chunk), chunk = 0, scale = 1;
  }
  if (scale > 1) v.x.multiply_add(scale, chunk);
  return n;
}

// Whether the exact value is below (-1), at (0) or above (1) the midpoint
// between the double of bits u (finite, positive) and the next one up.
int compare_midpoint(const Exact& v, std::uint64_t u) {
  const std::uint64_t fraction = u & ((std::uint64_t(1) << 52) - 1);
  const std::int64_t biased = static_cast<std::int64_t>(u >> 52);
  const std::uint64_t m = biased != 0 ? fraction | std::uint64_t(1) << 52 : fraction;
  const std::int64_t k = (biased != 0 ? biased - 1075 : -1074) - 1;  // midpoint = (2m + 1) * 2^k
  Big r = v.y;
  r.multiply_add(2 * m + 1, 0);
  int c;
  if (v.e2 >= k) {
    Big l = v.x;
    l.shift_left(v.e2 - k);
    c = compare(l, r);
  } else {
    r.shift_left(k - v.e2);
    c = compare(v.x, r);
  }
  return c != 0 ? c : v.sticky;
}

// A number off the fast path: its approximation (within a unit or so),
// then one step up or down for each midpoint the exact value passes; a tie
// goes to the even mantissa.
double nearest_exactly(const Decimal& d, std::string_view t) {
  const std::uint64_t sign = d.negative ? std::uint64_t(1) << 63 : 0;
  const std::int64_t top = d.exp10 + d.digits - 1;  // the power of ten of the first digit
  // below 10^-324, under half the least subnormal: 0; from 10^310: infinity
  if (d.mantissa == 0 || top < -325) return std::bit_cast<double>(sign);
  if (top > 309) return std::bit_cast<double>(infinity_bits | sign);
  Exact v;
  std::int64_t e10 = d.exp10;  // Decimal's 19 digits, when they are all of them
  if (d.dropped) e10 = top - (read_digits(t, v) - 1);
  else v.x.multiply_add(1, d.mantissa);
  v.e2 = e10;
  v.y.multiply_add(1, 1);
  if (e10 >= 0) {
    v.x.multiply_pow5(e10);
  } else {
    v.y.multiply_pow5(-e10);
  }
  std::uint64_t u = std::bit_cast<std::uint64_t>(d.approximate()) & ~(std::uint64_t(1) << 63);
  bool up = false;
  while (u < infinity_bits && compare_midpoint(v, u) + int(u & 1) > 0) ++u, up = true;
  if (!up)
    while (u > 0 && compare_midpoint(v, u - 1) - int(u & 1) < 0) --u;
  return std::bit_cast<double>(u | sign);
}
}  // namespace

std::optional<double> read_nearest_double(std::string_view text) {
  std::optional<Decimal> d = read_decimal(text);
  if (!d) return std::nullopt;
  if (std::optional<double> v = d->exact()) return v;
  return nearest_exactly(*d, text);
}

}  // namespace loopkit
