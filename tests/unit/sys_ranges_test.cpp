// The ranges every tool checks at its door: LOOPKIT_NOW and SECONDS options.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>

#include "cli/tool.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

namespace {
// LOOPKIT_NOW set to value (nullopt: unset) for one check, then restored
std::optional<Exit> clock_check_with(std::optional<std::string> value) {
  const char* old = std::getenv("LOOPKIT_NOW");
  std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  if (value) setenv("LOOPKIT_NOW", value->c_str(), 1);
  else unsetenv("LOOPKIT_NOW");
  std::optional<Exit> code;
  try {
    check_clock_override();
  } catch (const Error& e) {
    code = e.code();
  }
  if (saved) setenv("LOOPKIT_NOW", saved->c_str(), 1);
  else unsetenv("LOOPKIT_NOW");
  return code;
}

std::optional<Exit> number_check(const std::string& text, double min) {
  try {
    cli::number(text, "--wait", min);
  } catch (const Error& e) {
    return e.code();
  }
  return std::nullopt;
}
}  // namespace

TEST_CASE("LOOPKIT_NOW is epoch seconds from 0 to the end of year 9999", "[clock]") {
  for (const char* ok : {"0", "1736503530", "253402300799", "000123"}) {
    INFO(ok);
    CHECK_FALSE(clock_check_with(std::string(ok)));
  }
  CHECK_FALSE(clock_check_with(std::nullopt));
  CHECK_FALSE(clock_check_with(std::string()));  // empty means unset
  for (const char* bad : {"253402300800", "9223372036854775807", "99999999999999999999", "-1", "+5", " 5", "5 ", "abc",
                          "1.5", "1e9", "0x10"}) {
    INFO(bad);
    CHECK(clock_check_with(std::string(bad)) == Exit::usage);
  }
  CHECK(iso8601_utc(max_epoch) == "9999-12-31T23:59:59Z");
}

TEST_CASE("SECONDS options take finite decimals up to 1e9", "[cli]") {
  CHECK(cli::number("0", "--wait", 0) == 0);
  CHECK(cli::number("1.5", "--wait", 0) == 1.5);
  CHECK(cli::number("1e9", "--wait", 0) == 1e9);
  CHECK(cli::number("1000000000", "--wait", 0) == 1e9);
  for (const char* bad :
       {"1000000000.5", "1e10", "1e300", "inf", "-inf", "nan", "NaN", "-1", "", "abc", "1s", "0.001"}) {
    INFO(bad);
    CHECK(number_check(bad, 0.01) == Exit::usage);
  }
  CHECK(cli::number("0.01", "--heartbeat", 0.01) == 0.01);
  CHECK(cli::number("0.8", "--if-over", 0, 10) == 0.8);
  CHECK(number_check("11", 0) == std::nullopt);
  try {
    cli::number("1e300", "--heartbeat", 0.01);
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "--heartbeat: not a number from 0.01 to 1000000000: '1e300'");
  }
}
