// lib/core/json/json_compact and read_json_members (json_members.hpp): printing
// valid JSON text as json::compact and json::raw_text print the parsed value,
// and reading an object's members as spans, held to Boost.JSON (issue 24:
// event-show carries no Boost.JSON and prints every line as before).
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/json/json.hpp"
#include "core/json/json_compact.hpp"
#include "core/json/json_members.hpp"
#include "sys/base/error.hpp"
#include "mutations.hpp"

using namespace loopkit;

namespace {

const char* const seeds[] = {
    R"({"a":"\u0041\/\"\\\b\f\n\r\t\ud83d\ude00","b":[1,-2.5e+3,0.0,-0,true,false,null],"c":{"d":{}}})",
    "{ \"x\" : [ 1 , { \"y\" : \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\" } ] ,\n \"n\":18446744073709551616 }",
    R"({"a":1,"b":{"c":1,"c":[2,{"d":3,"d":4}]},"a":"x\u007fy","e":"del")"
    "\x7f"
    R"("})",
    R"([1E2,1e-7,100e-2,-0.0,1.7976931348623157e308,5e-324,123456789012345678901,-9223372036854775809])",
    R"([18446744073709551615,18446744073709551616,-9223372036854775808,9223372036854775807,0,-0,12.50])",
    R"({"seq":7,"ts":"2025-01-10T10:05:30Z","type":"it","session":"s","k\"ey":" sp ","":[ ],"o":{ }})",
    R"("plain")",
    "true",
};

// compact_json, raw_json and json_integer agree with the parsed value, when
// text is valid JSON
void prints_alike(std::string_view text) {
  json::value doc;
  try {
    doc = json::parse(text, "t");
  } catch (const Error&) {
    return;
  }
  INFO(std::string(text));
  std::size_t b = 0, e = text.size();
  while (b < e && std::string_view(" \t\n\r").find(text[b]) != std::string_view::npos) ++b;
  while (e > b && std::string_view(" \t\n\r").find(text[e - 1]) != std::string_view::npos) --e;
  const std::string_view v = text.substr(b, e - b);
  CHECK(compact_json(v) == json::compact(doc));
  CHECK(raw_json(v) == json::raw_text(doc));
  const std::optional<JsonInteger> n = json_integer(v);
  CHECK(n.has_value() == (doc.is_int64() || doc.is_uint64()));
  if (n && doc.is_int64()) CHECK((!n->is_unsigned && n->i == doc.get_int64()));
  if (n && doc.is_uint64()) CHECK((n->is_unsigned && n->u == doc.get_uint64()));
}

// read_json_members agrees with parse_json_object: the same error, or the
// same members (a name twice each time, in order) of the same object
void reads_alike(std::string_view text) {
  INFO(std::string(text));
  std::string expected, got;
  std::optional<JsonMembers> fields;
  try {
    fields = parse_json_object(text, "t");
  } catch (const Error& e) {
    expected = e.what();
  }
  std::vector<JsonMemberSpan> spans;
  bool object = false;
  try {
    object = read_json_members(text, "t", spans);
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    got = e.what();
  }
  REQUIRE(got == expected);
  if (!expected.empty()) return;
  REQUIRE(object == fields.has_value());
  if (!object) return;
  JsonMembers from_spans;
  for (const JsonMemberSpan& s : spans) {
    CHECK(s.escaped == (s.name.find('\\') != std::string_view::npos));
    from_spans.add(*json_string_value(s.name), compact_json(s.value));
  }
  REQUIRE(from_spans.members.size() == fields->members.size());
  for (std::size_t i = 0; i < spans.size() && i < fields->members.size(); ++i) {
    CHECK(from_spans.members[i].name == fields->members[i].name);
    CHECK(from_spans.members[i].text == compact_json(fields->members[i].text));
  }
}

void both(std::string_view text) {
  prints_alike(text);
  reads_alike(text);
}

}  // namespace

TEST_CASE("json_compact: every cut, change, loss and gain of a byte prints as the parsed value", "[event][json]") {
  static const unsigned char bytes[] = {'"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0',  '1', '-',
                                        '.', 'e',  'E', '+', 'u', 'x', 't', 'n', 'a', 0x7f, 0xc3};
  for (std::string_view seed : seeds)
    for_each_mutation(seed, bytes, [](const std::string& text, std::size_t) { both(text); });
}

TEST_CASE("json_compact: numbers in every form print as number_text prints them", "[event][json]") {
  for (const char* n : {"0",
                        "-0",
                        "1",
                        "-1",
                        "0.0",
                        "-0.0",
                        "1.0",
                        "1.5",
                        "1e2",
                        "1E2",
                        "1e+2",
                        "1e-2",
                        "-1.5E+3",
                        "0e10",
                        "1e400",
                        "1e-400",
                        "123456789012345678",
                        "1234567890123456789",
                        "9223372036854775807",
                        "9223372036854775808",
                        "18446744073709551615",
                        "18446744073709551616",
                        "-9223372036854775808",
                        "-9223372036854775809",
                        "0.1",
                        "0.30000000000000004",
                        "123456789.123456789",
                        "1e21",
                        "1e22",
                        "100000000000000000000000",
                        "5e-324",
                        "2.5e-324",
                        "1.7976931348623157e308",
                        "4.9e-324"})
    both(n);
  CHECK(compact_json("-0") == "0");
  CHECK(compact_json("1E2") == "100");
  CHECK(compact_json("1e21") == "1e+21");
  CHECK(compact_json("18446744073709551616") == "1.8446744073709552e+19");
  CHECK(compact_json(R"({"a" : 1, "a" : [ 2 ], "b":"\u0041\/"})") == R"({"a":[2],"b":"A/"})");
  CHECK(compact_json("\"a\x7f\"") == R"("a\u007f")");
  CHECK(raw_json(R"("x\ty")") == "x\ty");
}

TEST_CASE("json_compact: random changes to valid text print and read as Boost.JSON's", "[event][json]") {
  std::mt19937 random(24);  // fixed: the same cases every run
  static const char pool[] = "\"\\{}[],: \n0123456789-.eE+utfnalsx\x7f\xc3\xa9";
  for (int round = 0; round < 20000; ++round) {
    both(mutated(random, seeds[random() % std::size(seeds)], pool));
  }
}

TEST_CASE("read_json_members: nesting at the limit, and past it", "[event][json]") {
  const std::string ok = "{\"a\":" + std::string(999, '[') + std::string(999, ']') + "}";
  const std::string deep = "{\"a\":" + std::string(1000, '[') + std::string(1000, ']') + "}";
  both(ok);
  both(deep);
  std::vector<JsonMemberSpan> spans;
  CHECK(read_json_members(ok, "t", spans));
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].value.size() == 1998);
  CHECK_THROWS_AS(read_json_members(deep, "t", spans), Error);
  CHECK_FALSE(read_json_members(" [1] ", "t", spans));
}
