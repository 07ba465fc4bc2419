// loopkit::format against fmt itself (header-only here), which it replaced:
// the same text for every kind of argument and spec the tools use, and for
// doubles drawn from every exponent (JSON numbers must keep their text).
#define FMT_HEADER_ONLY
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "sys/base/format.hpp"

using loopkit::format;

TEST_CASE("format: text, characters, booleans and braces", "[format]") {
  std::string s = "str";
  std::string_view v = "view";
  CHECK(format("plain") == "plain");
  CHECK(format("{{}} {{x}}") == "{} {x}");
  CHECK(format("{}|{}|{}", s, v, "lit") == "str|view|lit");
  CHECK(format("{}{}", 'a', true) == fmt::format("{}{}", 'a', true));
  CHECK(format("[{}]", std::string()) == "[]");
  CHECK(format("{:5}|", "ab") == fmt::format("{:5}|", "ab"));
  CHECK(format("\\x{:02X}", char(-1)) == "\\xFF");
  CHECK(format("\\u{:04x}", char(7)) == fmt::format("\\u{:04x}", char(7)));
}

TEST_CASE("format: integers of every width, padded and in hex", "[format]") {
  std::mt19937_64 rng(24);
  for (int i = 0; i < 20000; ++i) {
    auto raw = rng();
    int shift = int(rng() % 64);
    auto u = raw >> shift;
    auto n = std::int64_t(raw) >> shift;
    int w = int(rng() % 12);
    CHECK(format("{}", u) == fmt::format("{}", u));
    CHECK(format("{}", n) == fmt::format("{}", n));
    CHECK(format("{:08x}", u) == fmt::format("{:08x}", u));
    CHECK(format("{:04}|{:02}", n, int(n % 100)) == fmt::format("{:04}|{:02}", n, int(n % 100)));
    CHECK(format("{}{:0{}}", "p", n, w) == fmt::format("{}{:0{}}", "p", n, w));
  }
  CHECK(format("{}", std::numeric_limits<std::int64_t>::min()) == "-9223372036854775808");
  CHECK(format("{}", std::numeric_limits<std::uint64_t>::max()) == "18446744073709551615");
  CHECK(format("{} {}", short(-3), (unsigned char)200) == "-3 200");
}

TEST_CASE("format: doubles, shortest and fixed, as fmt writes them", "[format]") {
  std::mt19937_64 rng(2024);
  auto same = [](double d) {
    INFO(fmt::format("{:a}", d));
    CHECK(format("{}", d) == fmt::format("{}", d));
    CHECK(format("{:.3f}", d) == fmt::format("{:.3f}", d));
  };
  for (double d : {0.0,
                   -0.0,
                   1.0,
                   -1.0,
                   0.1,
                   0.5,
                   100.0,
                   1e15,
                   1e16,
                   1.5e16,
                   123456789012345678.0,
                   1e-4,
                   1e-5,
                   0.00012345,
                   1e21,
                   1e22,
                   1e100,
                   1e-300,
                   5e-324,
                   1.7976931348623157e308,
                   2.5,
                   1234.5678}) {
    same(d);
  }
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    if (!std::isfinite(d)) continue;
    if (std::fabs(d) > 1e300) {  // fixed notation of those is long, not different
      CHECK(format("{}", d) == fmt::format("{}", d));
      continue;
    }
    same(d);
  }
  for (int i = 0; i < 100000; ++i) {  // numbers people write: few digits
    double d = double(std::int64_t(rng() % 2000001) - 1000000) / std::pow(10.0, double(rng() % 12));
    same(d);
  }
  CHECK(format("{}", std::numeric_limits<double>::infinity()) == "inf");
  CHECK(format("{}", -std::numeric_limits<double>::quiet_NaN()) ==
        fmt::format("{}", -std::numeric_limits<double>::quiet_NaN()));
}
