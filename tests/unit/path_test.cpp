// core/scan/path: --arg variables in paths.
#include <catch2/catch.hpp>

#include "core/scan/path.hpp"
#include "sys/base/error.hpp"
TEST_CASE("[$NAME]: the member a --arg variable names, exactly", "[path]") {
  loopkit::define_path_variable("id", "bd.1 \"x\" [0]");
  auto p = loopkit::parse_path(".history[$id].status");
  REQUIRE(p.segments.size() == 3);
  CHECK(p.segments[1].kind == loopkit::Segment::key);
  CHECK(p.segments[1].name == "bd.1 \"x\" [0]");
  CHECK(loopkit::parse_path(R"(["$id"])").segments[0].name == "$id");  // quoted: literal
  loopkit::define_path_variable("id", "later");
  CHECK(loopkit::parse_path("[$id]").segments[0].name == "later");  // the last definition wins
  for (const char* bad : {"[$nope]", "[$]", "[$1a]", "[$id", "[$id.x]"})
    CHECK_THROWS_AS(loopkit::parse_path(bad), loopkit::Error);
  for (const char* name : {"", "1a", "a-b", "a b"})
    CHECK_THROWS_AS(loopkit::define_path_variable(name, "v"), loopkit::Error);
  CHECK_THROWS_AS(loopkit::define_path_variable("ok", "\xff"), loopkit::Error);
}
