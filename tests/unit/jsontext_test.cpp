// lib/core/jsontext: spans of valid JSON text, without a document.
#include <catch2/catch.hpp>

#include "core/json.hpp"
#include "core/jsontext.hpp"
#include "core/path.hpp"
#include "sys/error.hpp"

using namespace loopkit;

static std::string at(const std::string& text, const char* path) {
  JsonText jt(text);
  auto spans = lookup_spans(jt, parse_path(path));
  REQUIRE(spans.size() == 1);
  return spans[0] ? text.substr(spans[0]->begin, spans[0]->end - spans[0]->begin) : "<missing>";
}

TEST_CASE("strings with escapes, quotes and backslashes end where they end") {
  // lengths around the 16-byte steps, and a string that ends the text
  for (int pad = 0; pad < 40; ++pad) {
    std::string s = "\"" + std::string(pad, 'x') + "\\\\\\\"\\\\\"";
    JsonText jt(s);
    CHECK(jt.skip_string(0) == s.size());
  }
  std::string t = R"({"a\"b": "c\\", "d": ["]", "}", {"e": "\\\""}], "f": 1.0})";
  CHECK(at(t, R"(["a\"b"])") == R"("c\\")");
  CHECK(at(t, ".d[2].e") == R"("\\\"")");
  CHECK(at(t, ".f") == "1.0");
}

TEST_CASE("items of nested containers, walked once, agree with a parse") {
  std::string t = "{ \"h\" : [ {\"i\": 1}, [2, [3]], \"4\" ] , \"n\": null }";
  JsonText jt(t);
  const auto& root = jt.items(jt.root());
  REQUIRE(root.size() == 2);
  CHECK(jt.key_name(root[1]) == "n");
  const auto& h = jt.items(root[0].value);
  REQUIRE(h.size() == 3);
  CHECK(t.substr(h[1].value, h[1].end - h[1].value) == "[2, [3]]");
  CHECK(&jt.items(root[0].value) == &h);  // remembered
  CHECK(at(t, ".h[-1]") == "\"4\"");
  CHECK(at(t, ".n.deeper") == "<missing>");
}

TEST_CASE("the last of duplicate members wins, as in a parsed document") {
  std::string t = R"({"a": 1, "a": 2})";
  CHECK(at(t, ".a") == "2");
  CHECK(json::parse(t, "x").at("a").as_int64() == 2);
}

TEST_CASE("validate_json refuses what parse refuses, with the same message") {
  for (const char* bad : {"", "{", "[1,]", "{} {}", "\"\xff\"", "nul"}) {
    std::string why;
    try {
      validate_json(bad, "f");
    } catch (const Error& e) {
      why = e.what();
      CHECK(e.code() == Exit::data);
    }
    CHECK(why.find("'f': not valid JSON") == 0);
  }
  CHECK_NOTHROW(validate_json(" [1, {\"a\": \"b\"}] \n", "f"));
}

TEST_CASE("[] over an object lists a duplicated name once: where it first stands, with its last value") {
  std::string t = "{\"b\":1,\"a\":2,\"b\":3,\"c\":4,\"a\":5}";
  JsonText jt(t);
  auto spans = lookup_spans(jt, parse_path(".[]"));
  std::string got;
  for (const auto& s : spans) got += t.substr(s->begin, s->end - s->begin);
  CHECK(got == "354");
  CHECK(at(t, "b") == "3");
  // the same as a parsed document gives
  std::string parsed;
  for (const auto* v : lookup(json::parse(t, "x"), parse_path(".[]"))) parsed += json::compact(*v);
  CHECK(parsed == got);
}

TEST_CASE("paths deeper than the limit and names that are not UTF-8 are malformed") {
  std::string deep;
  for (std::size_t i = 0; i < json::max_depth; ++i) deep += "[0]";
  CHECK_NOTHROW(parse_path(deep));
  CHECK_THROWS_AS(parse_path(deep + "[0]"), Error);
  std::string huge;
  for (int i = 0; i < 1000000; ++i) huge += "a.";
  CHECK_THROWS_AS(parse_path(huge + "b"), Error);
  CHECK_THROWS_AS(parse_path("a\xff"), Error);
  CHECK_THROWS_AS(parse_path("[\"\xed\xa0\x80\"]"), Error);
  CHECK_THROWS_AS(parse_path("[\"\\udc00\"]"), Error);
  CHECK(parse_path("[\"\\u00e9\"]").segments[0].name == "\xc3\xa9");
}
