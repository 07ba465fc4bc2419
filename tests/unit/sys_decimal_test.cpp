// sys/decimal against strtod, which it replaces where no exact double is
// needed: the grammar, the fast path, the approximation, and the boundary
// of the doubles' range, digit for digit.
#include <catch2/catch.hpp>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>

#include "sys/decimal.hpp"
#include "sys/format.hpp"

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
