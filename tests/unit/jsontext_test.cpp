// lib/core/json/jsontext (the allocation-free validation) and the one lookup
// of paths in text (textedit::lookup on a scan): spans without a document.
#include <catch2/catch.hpp>

#include "core/json/json.hpp"
#include "core/json/jsontext.hpp"
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"
#include "core/edit/textedit.hpp"
#include "reference.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

static std::vector<std::optional<std::pair<std::size_t, std::size_t>>> spans(const std::string& text, const Path& p) {
  scan::Want w;
  w.add(p);
  w.settle();
  return textedit::lookup(text, scan::scan(text, w, "t"), p);
}

static std::string at(const std::string& text, const char* path) {
  auto s = spans(text, parse_path(path));
  REQUIRE(s.size() == 1);
  return s[0] ? text.substr(s[0]->first, s[0]->second - s[0]->first) : "<missing>";
}

TEST_CASE("strings with escapes, quotes and backslashes end where they end") {
  // lengths around the 16-byte steps, and a string that ends the text
  for (int pad = 0; pad < 40; ++pad) {
    std::string s = "{\"k\": \"" + std::string(pad, 'x') + "\\\\\\\"\\\\\"}";
    CHECK(at(s, "k") == s.substr(6, s.size() - 7));
  }
  std::string t = R"({"a\"b": "c\\", "d": ["]", "}", {"e": "\\\""}], "f": 1.0})";
  CHECK(at(t, R"(["a\"b"])") == R"("c\\")");
  CHECK(at(t, ".d[2].e") == R"("\\\"")");
  CHECK(at(t, ".f") == "1.0");
}

TEST_CASE("items of nested containers agree with a parse") {
  std::string t = "{ \"h\" : [ {\"i\": 1}, [2, [3]], \"4\" ] , \"n\": null }";
  CHECK(at(t, ".h[1]") == "[2, [3]]");
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
  std::string got;
  for (const auto& s : spans(t, parse_path(".[]"))) got += t.substr(s->first, s->second - s->first);
  CHECK(got == "354");
  CHECK(at(t, "b") == "3");
  // the same as a parsed document gives
  std::string parsed;
  const json::value doc = json::parse(t, "x");  // outlives the pointers lookup returns
  for (const auto* v : reference::lookup(doc, parse_path(".[]"))) parsed += json::compact(*v);
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
