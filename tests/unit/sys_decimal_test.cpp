// sys/base/decimal against strtod, which it replaces: the grammar, the fast
// path, the approximation, the boundary of the doubles' range digit for
// digit, and the nearest double bit for bit.
#include <catch2/catch.hpp>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>

#include "sys/base/decimal.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;

namespace {
double libc(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// what strtod reads of a JSON number: a random one, of any size
std::string random_number(std::mt19937_64& rng) {
  std::string s;
  if (rng() % 2) s += '-';
  int int_digits = 1 + int(rng() % 25);
  s += char('1' + rng() % 9);
  for (int i = 1; i < int_digits; ++i) s += char('0' + rng() % 10);
  if (rng() % 2) {
    s += '.';
    for (int i = 0, n = 1 + int(rng() % 25); i < n; ++i) s += char('0' + rng() % 10);
  }
  if (rng() % 2) s += loopkit::format("e{}", int(rng() % 700) - 350);
  return s;
}
}  // namespace

TEST_CASE("decimal: the grammar of numbers and option values", "[decimal]") {
  for (const char* ok : {"5", "5.", ".5", "+5", "-0.5e-3", "1E5", "0", "-0", "007", "1e+2", "123456789012345678901234"})
    CHECK(read_decimal(ok));
  for (const char* bad : {"", ".", "-", "e5", "5e", "5e+", "0x10", "inf", "nan", " 5", "5 ", "1.2.3", "1e2.5", "--1"})
    CHECK_FALSE(read_decimal(bad));
  CHECK(read_decimal(".5")->approximate() == 0.5);
  CHECK(read_decimal("5.")->approximate() == 5.0);
  CHECK(std::signbit(read_decimal("-0")->approximate()));
  CHECK(read_decimal("1e999999999999999999999")->approximate() == HUGE_VAL);
  CHECK(read_decimal("1e-999999999999999999999")->approximate() == 0.0);
}

TEST_CASE("decimal: the fast path is strtod's double, the rest within a unit", "[decimal]") {
  std::mt19937_64 rng(1024);
  int exact = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string s = random_number(rng);
    auto d = read_decimal(s);
    REQUIRE(d);
    double want = libc(s);
    INFO(s);
    if (auto v = d->exact()) {
      ++exact;
      CHECK(*v == want);
    }
    double got = d->approximate();
    if (std::isinf(want) || want == 0) {
      // at the edges of the range the approximation may fall either side
      CHECK((std::isinf(got) || std::fabs(got) > 1e307 || got == 0 || std::fabs(got) < 1e-300));
    } else if (std::fabs(want) > 1e-300) {
      CHECK(std::fabs(got - want) <= std::fabs(std::nextafter(want, 0.0) - want));
    }
  }
  CHECK(exact > 10000);  // the random numbers reach the fast path too
}

TEST_CASE("decimal: a JSON number is finite exactly where strtod's is", "[decimal]") {
  const std::string limit =
      "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286"
      "416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571"
      "366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
  auto same = [](const std::string& s) {
    INFO(s);
    CHECK(is_finite_json_number(s) == std::isfinite(libc(s)));
  };
  for (const char* s : {"0", "-0", "0e999999", "0.0000e400", "1e308", "1e309", "-1e309", "1.7976931348623157e308",
                        "1.7976931348623158e308", "1.7976931348623159e308", "179769313486231580793728971405303e275",
                        "0.1e310", "0.01e310", "1e-400", "123"})
    same(s);
  same(limit);                       // the tie: infinity
  same(limit + "0000");              // the tie again, with its zeros
  same(limit.substr(0, 308) + "1");  // just below
  same(limit + "00001");             // just above
  same("0." + limit + "e309");       // as a fraction
  same("0.000" + limit + "e312");    // with leading zeros
  same(limit.substr(0, 100) + "." + limit.substr(100));
  std::mt19937_64 rng(308);
  for (int i = 0; i < 20000; ++i) {  // digits near the limit, cut and changed
    std::string s = limit.substr(0, 1 + rng() % limit.size());
    if (rng() % 2) s[rng() % s.size()] = char('0' + rng() % 10);
    if (s[0] == '0') s[0] = '1';
    if (rng() % 3 == 0) s += std::string(rng() % 5, '0') + char('0' + rng() % 10);
    s += loopkit::format("e{}", 309 - int(s.size()) + int(rng() % 3) - 1);
    same(s);
  }
  for (int i = 0; i < 100000; ++i) same(random_number(rng));
}

TEST_CASE("decimal: exponents past any double, and leading zeros that meet them", "[decimal]") {
  std::string zeros(2000000, '0');
  CHECK_FALSE(is_finite_json_number("0." + zeros + "1e2000400"));  // 1e400
  CHECK(is_finite_json_number("0." + zeros + "1e2000300"));        // 1e300
  CHECK(read_decimal("0." + zeros + "1e2000010")->approximate() == 1e9);
  CHECK(read_decimal("1e99999999999999999999999999")->approximate() == HUGE_VAL);
  CHECK(read_decimal("-1e-99999999999999999999999999")->approximate() == 0.0);
}

// read_nearest_double against strtod, bit for bit (-0 and the sign of
// infinity count): a wrong rounding in either direction fails
namespace {
void same_double(const std::string& s) {
  INFO(s.substr(0, 120) << (s.size() > 120 ? "..." : "") << " (" << s.size() << " chars)");
  for (const std::string& t : {s, "-" + s}) {
    double want = libc(t);
    std::optional<double> got = read_nearest_double(t);
    REQUIRE(got);
    CHECK(std::bit_cast<std::uint64_t>(*got) == std::bit_cast<std::uint64_t>(want));
  }
}

// every digit of x (exactly: glibc prints long doubles in full)
std::string in_full(long double x) {
  char buf[1300];
  std::snprintf(buf, sizeof buf, "%.1150Le", x);
  return buf;
}

// the halfway point between the double of bits u and the next one up
long double midpoint_above(std::uint64_t u) {
  return (static_cast<long double>(std::bit_cast<double>(u)) + std::bit_cast<double>(u + 1)) / 2;
}

// s with its digits (not its exponent) cut after n significant ones
std::string cut(const std::string& s, std::size_t n) {
  std::size_t e = s.find('e');
  return s.substr(0, std::min(e, n + 1)) + s.substr(e);
}

// s with a 1 more than max digits (800) past its first digit: a tie's
// "above", visible to the sticky digit alone
std::string nudged_up(const std::string& s) {
  std::size_t e = s.find('e');
  std::string digits = s.substr(0, e);
  digits.resize(1200, '0');
  return digits + "1" + s.substr(e);
}
}  // namespace

TEST_CASE("decimal: the nearest double of known hard texts", "[decimal]") {
  for (const char* s : {"0",
                        "0.0e5",
                        "1",
                        "9007199254740993",
                        "9007199254740992.5",
                        "9007199254740993.000000000000001",
                        "18014398509481993",
                        "1e23",
                        "8.988465674311579e307",
                        "2.2250738585072011e-308",
                        "2.2250738585072012e-308",
                        "2.2250738585072014e-308",
                        "2.225073858507201136057409796709131975934819546351645648e-308",
                        "4.9406564584124654e-324",
                        "2.4703282292062327e-324",
                        "2.4703282292062328e-324",
                        "2.47032822920623272e-324",
                        "7.4109846876186982e-324",
                        "1.7976931348623157e308",
                        "1.7976931348623158e308",
                        "1.7976931348623159e308",
                        "0e999999999",
                        "1e-999999999",
                        "1e999999999",
                        "0.1",
                        "0.3",
                        "1e-400",
                        "1e400",
                        "5e-324",
                        "3e-324",
                        "2e-324",
                        "123456789012345678901234567890",
                        "0.000000000000000000000000000001234567890123456789",
                        "1e-22",
                        "1e-23",
                        "4.35970245245191e-320",
                        "6.9294956446009195e15",
                        "3.0540412971182e-320",
                        "2.2250738585072011e-308",
                        "1.00000000000000011102230246251565404236316680908203125",
                        "1.00000000000000011102230246251565404236316680908203124",
                        "1.00000000000000011102230246251565404236316680908203126"})
    same_double(s);
  same_double(std::string(2000, '9'));               // 2000 digits: 10^2000, infinity
  same_double("0." + std::string(2000, '0') + "1");  // 10^-2001: 0
  same_double("0." + std::string(300, '0') + std::string(700, '7'));
  same_double(std::string(300, '3') + "." + std::string(700, '3'));
  // the tie between the largest double and infinity (infinity, the even
  // one), in full and either side of it
  std::string limit = in_full(std::ldexp(1.0L, 1024) - std::ldexp(1.0L, 970));
  same_double(limit);
  same_double(nudged_up(limit));
  same_double(cut(limit, 40));
  // over 800 digits at both ends of the range: the bignums' largest
  std::mt19937_64 rng(1075);
  for (int i = 0; i < 400; ++i) {
    std::string s(1, char('1' + rng() % 9));
    for (int k = 1; k < 820; ++k) s += char('0' + rng() % 10);
    int top = i % 2 ? -326 + int(rng() % 6) : 306 + int(rng() % 5);
    same_double(s + loopkit::format("e{}", top - 819));
  }
}

TEST_CASE("decimal: the nearest double at and beside every power of two", "[decimal]") {
  for (std::uint64_t e = 0; e < 2047; ++e) {  // each biased exponent: 2^-1074 (subnormal) .. 2^1023
    std::uint64_t u = e == 0 ? 1 : e << 52;
    for (std::uint64_t v : {u - 1, u, u + 1}) {
      if (v == 0 || v >= 0x7FF0000000000000ULL) continue;
      std::string mid = in_full(midpoint_above(v)), below = in_full(midpoint_above(v - 1));
      same_double(in_full(std::bit_cast<double>(v)));
      same_double(mid);  // a tie: to the even one
      same_double(below);
      same_double(nudged_up(mid));
      same_double(nudged_up(below));
      same_double(cut(mid, 17));  // just under the tie
      same_double(cut(below, 25));
    }
  }
}

TEST_CASE("decimal: the nearest double of random midpoints, in full, nudged and cut", "[decimal]") {
  std::mt19937_64 rng(767);
  for (int i = 0; i < 20000; ++i) {
    std::uint64_t u = rng() % 0x7FF0000000000000ULL;
    if (i % 4 == 0) u %= std::uint64_t(1) << 53;  // subnormals and the least normals: the longest midpoints
    std::string mid = in_full(midpoint_above(u));
    same_double(mid);
    same_double(nudged_up(mid));
    same_double(cut(mid, 17 + rng() % 760));
  }
  // the longest midpoint: 767 significant digits, then 30 zeros and a 1
  std::string longest = in_full(midpoint_above((std::uint64_t(1) << 52) - 2));
  REQUIRE(longest[768] != '0');  // its 767th digit, after "d."
  CHECK(longest.find_first_not_of('0', 769) == longest.find('e'));
  same_double(longest);
  same_double(nudged_up(longest));
  std::string e = longest.substr(longest.find('e'));
  same_double(cut(longest, 767).substr(0, cut(longest, 767).find('e')) + std::string(30, '0') + "1" + e);
}

TEST_CASE("decimal: the nearest double of random texts, of any length and exponent", "[decimal]") {
  std::mt19937_64 rng(2024);
  for (int i = 0; i < 300000; ++i) {
    int n = 1 + int(rng() % 40);
    if (i % 200 == 0) n = 100 + int(rng() % 900);
    std::string s(1, char('1' + rng() % 9));
    for (int k = 1; k < n; ++k) s += char('0' + rng() % 10);
    int point = 1 + int(rng() % n);  // digits before the point
    if (point < n) s.insert(std::size_t(point), ".");
    if (rng() % 8 == 0) s.insert(0, point < n ? "000" : "0.000");  // leading zeros: no significance
    // the first digit's power of ten: across the range, past both ends of it
    long long top = (long long)(rng() % 680) - 350;
    if (rng() % 50 == 0) top = (long long)(rng() % 4294967296ULL) - 2147483648LL;
    s += loopkit::format("e{}", s.starts_with("0.") ? top + 4 : top - (point - 1));
    same_double(s);
  }
}
