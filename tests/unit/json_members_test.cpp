// lib/core/json/json_members: the lock tools' own JSON reader, held to json::parse
// (issue 24: the lock tools carry no Boost.JSON, and judge and word every
// file as before).
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/json/json.hpp"
#include "core/json/json_members.hpp"
#include "boost_parse.hpp"
#include "sys/base/error.hpp"
#include "mutations.hpp"

using namespace loopkit;

namespace {

// What Boost's parser (the reference) says of text: its error, or "" and
// the document.
std::string boost_error(std::string_view text, json::value& doc) {
  try {
    doc = reference::boost_parse(text, "t");
    return "";
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    return e.what();
  }
}

// The error of f(), or "".
template <class F>
std::string error_of(F f) {
  try {
    f();
    return "";
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    return e.what();
  }
}

// json::parse and json::parse_many (json_members' reader building values)
// agree with Boost's parser on text: the same error, or the same values,
// kinds and member order.
void parse_agrees(std::string_view text, const std::string& expected, const json::value& doc) {
  json::value got;
  REQUIRE(error_of([&] { got = json::parse(text, "t"); }) == expected);
  if (expected.empty()) REQUIRE(reference::same_value(got, doc));
  std::vector<json::value> many, many_expected;
  const std::string many_error = error_of([&] { many_expected = reference::boost_parse_many(text, "t"); });
  REQUIRE(error_of([&] { many = json::parse_many(text, "t"); }) == many_error);
  REQUIRE(many.size() == many_expected.size());
  for (std::size_t i = 0; i < many.size(); ++i) REQUIRE(reference::same_value(many[i], many_expected[i]));
}

// parse_json_object agrees with Boost's parser on text: the same error, or
// the same members with equal values, in its order; so does json::parse.
void agrees(std::string_view text) {
  INFO(std::string(text));
  json::value doc;
  const std::string expected = boost_error(text, doc);
  parse_agrees(text, expected, doc);
  std::optional<JsonMembers> got;
  std::string error;
  try {
    got = parse_json_object(text, "t");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    error = e.what();
  }
  REQUIRE(error == expected);
  if (!expected.empty()) return;
  REQUIRE(got.has_value() == doc.is_object());
  if (!got) return;
  const json::object& o = doc.as_object();
  REQUIRE(got->members.size() == o.size());
  std::size_t i = 0;
  for (const auto& kv : o) {
    const JsonMembers::Member& m = got->members[i++];
    CHECK(m.name == std::string(kv.key()));
    CHECK(m.text.find_first_of("\n\r\t") == std::string::npos);
    CHECK(json::equal(json::parse(m.text, "member"), kv.value()));
  }
}

const char* const seeds[] = {
    (R"({"session":"auth","pid":12345,"host":"build-3","pid_start":8123456,"started_at":"2025-01-10T10:00:00Z",)"
     R"("heartbeat":"2025-01-10T10:05:30Z","heartbeat_epoch":1736503530,"boot_id":"b"})"),
    R"({"a":"\u0041\/\"\\\b\f\n\r\t\ud83d\ude00","b":[1,-2.5e+3,0.0,-0,true,false,null],"c":{"d":{}}})",
    "{ \"x\" : [ 1 , { \"y\" : \"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\" } ] ,\n \"n\":18446744073709551616 }",
    R"({"e":"\u12x4", "f":"\ud800\u0041", "g":"\udc00xxxxxxxxxx"})",
    R"({"s":"\ud800\udc00"})",
    R"(["x",1])",
    "12345",
    R"({"a":1,"b":2,"a":3})",
    "1 2.5e3 [\"x\"]{\"a\":{}}true\nnull -0 18446744073709551615 -9223372036854775808 9223372036854775808",
};

}  // namespace

TEST_CASE("json_members: every cut, change, loss and gain of a byte is judged and worded as json::parse does",
          "[lock][json]") {
  static const unsigned char bytes[] = {'"',  '\\', '{',  '}',  '[',  ']',  ',',  ':',  ' ',  '\n', '0',  '1',
                                        '-',  '.',  'e',  'E',  '+',  'u',  'x',  't',  'n',  'f',  'a',  'D',
                                        0x00, 0x1f, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xe0, 0xed, 0xf0, 0xf4, 0xf5};
  for (std::string_view seed : seeds)
    for_each_mutation(seed, bytes, [](const std::string& text, std::size_t at) {
      agrees(text);
      // cut soon after the change, where Boost reads escapes byte by byte
      agrees(text.substr(0, std::min(text.size(), at + 6)));
    });
}

TEST_CASE("json_members: random changes to records are judged and worded as json::parse does", "[lock][json]") {
  std::mt19937 random(24);  // fixed: the same cases every run
  static const char pool[] = "\"\\{}[],: \n0123456789-.eE+utfnalsx\x01\x7f\x80\xc3\xa9\xe2\xed\xf0\xff";
  for (int round = 0; round < 20000; ++round) {
    agrees(mutated(random, seeds[random() % std::size(seeds)], pool, true));
  }
}

TEST_CASE("json_members: numbers, literals, depth and names twice", "[lock][json]") {
  for (const char* text : {"-",
                           "-x",
                           "1.",
                           "1.x",
                           "1e",
                           "1e+",
                           "1ex",
                           "01",
                           "-01",
                           "{\"a\":01}",
                           "{\"a\":-}",
                           "1e400",
                           "-1e400",
                           "{\"a\":1e400}",
                           "{\"a\":1e400 }",
                           "{\"a\":1e-400}",
                           "1e99999999999999999999",
                           "0e400",
                           "tru",
                           "trux",
                           "nul",
                           "nulx",
                           "f",
                           "fals",
                           "falsy",
                           "{\"a\":tx}",
                           "{\"a\":\"\\u12\"}",
                           "{\"a\":\"\\u\"}",
                           "\"\\ud800\"",
                           "\"\\ud800\\\"",
                           "\"\\udc00\"",
                           "\"\\ud800\\ud800\"",
                           "{\"a\":1,}",
                           "{,}",
                           "[1,]",
                           "[,1]",
                           "{\"a\"}",
                           "{\"a\" 1}",
                           "{1:2}",
                           " ",
                           "\t{}\n ",
                           "{}x",
                           "{} {}",
                           "/",
                           "{\"a\":/}",
                           "\xef\xbb\xbf{}",
                           "{\"a\":\"\xed\xa0\x80\"}",
                           "{\"a\":\"\xf4\x90\x80\x80\"}",
                           "{\"a\":\"\xe0\x9f\xbf\"}",
                           "{\"a\":123456789012345678901234567890}",
                           "{\"a\":-9223372036854775809}",
                           "{\"a\":18446744073709551615}",
                           "12345678901234567890123.",
                           "12345678901234567890123.x",
                           "[12345678901234567890123.]",
                           "1.5e+",
                           "1.5e-x",
                           "1e2147483647",
                           "1e2147483648",
                           "1.5e-2147483648",
                           "1.5e-2147483647",
                           "123456789012345678901234e2147483630",
                           "0.000000000000000000000001e-2147483630",
                           "-9223372036854775808",
                           "-9223372036854775808.5e3"})
    agrees(text);
  const std::string deep = std::string(999, '[') + "{}" + std::string(999, ']');
  agrees(deep);
  agrees("[" + deep + "]");
  agrees(R"({"a":)" + deep + "}");
  agrees(R"({"a":[)" + deep + "]}");
  // a name twice: its first place, its last value
  JsonMembers f = *parse_json_object(R"({"a":1,"b":2,"a":{"x" : 3}})", "t");
  REQUIRE(f.members.size() == 2);
  CHECK(f.json() == R"({"a":{"x":3},"b":2})");
}

TEST_CASE("json_members: values keep their text, whitespace outside strings dropped", "[lock][json]") {
  JsonMembers f = *parse_json_object(
      "{\"n\":1.50,\"big\":123456789012345678901234567890,\"z\":-0,\"s\":\"\\u0041 \\/\",\n"
      "  \"o\": { \"k\" : [ 1 ,\t\"a b\" ] }}",
      "t");
  CHECK(f.json() == R"({"n":1.50,"big":123456789012345678901234567890,"z":-0,"s":"\u0041 \/","o":{"k":[1,"a b"]}})");
  CHECK(f.string("s") == "A /");
  CHECK(f.string("n").empty());
  CHECK(f.string("missing").empty());
  f.set_string("s", "q\"\\\n\x01\x7f\xc3\xa9");
  f.set_integer("n", -7);
  f.set_number("e", 2.5);
  f.set_number("w", 30);
  f.erase("o");
  f.erase("missing");
  CHECK(f.json() == R"({"n":-7,"big":123456789012345678901234567890,"z":-0,"s":"q\"\\\n\u0001\u007f)"
                    "\xc3\xa9"
                    R"(","e":2.5,"w":30})");
  // the escapes json::quote writes, whatever the string
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  std::string quoted;
  append_json_string(quoted, all);
  CHECK(quoted == json::quote(all));
  // decoding: escapes and surrogate pairs
  CHECK(json_string_value(R"("\ud83d\ude00\u00e9\n")") == "\xf0\x9f\x98\x80\xc3\xa9\n");
  CHECK_FALSE(json_string_value("12"));
}
