// lib/core/json, path and assign: parsing, layout, numbers, edits.
#include <catch2/catch.hpp>

#include "core/edit/assign.hpp"
#include "core/json/json.hpp"
#include "core/json/jsontext.hpp"
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"
#include "core/edit/textedit.hpp"
#include "sys/base/error.hpp"
#include "reference.hpp"

using namespace loopkit;

static Exit code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Exit::ok;
}

TEST_CASE("parse refuses what is not exactly one document") {
  CHECK(code_of([] { json::parse("", "x"); }) == Exit::data);
  CHECK(code_of([] { json::parse("  \n", "x"); }) == Exit::data);
  CHECK(code_of([] { json::parse("{} {}", "x"); }) == Exit::data);
  CHECK(code_of([] { json::parse("{\"a\":", "x"); }) == Exit::data);
  CHECK(code_of([] { json::parse("\"\xff\"", "x"); }) == Exit::data);
  CHECK(json::parse(" {\"a\": [1, 2.5, null]} \n", "x").at("a").as_array().size() == 3);
}

TEST_CASE("parse error names the file, line and column") {
  try {
    json::parse("{\n  \"a\": tru\n}", "state.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'state.json': not valid JSON") == 0);
    CHECK(std::string(e.what()).find("line 2") != std::string::npos);
  }
}

TEST_CASE("the depth limit is deliberate: 1000 levels read, more is bad data") {
  std::string ok = std::string(900, '[') + std::string(900, ']');
  CHECK_NOTHROW(json::parse(ok, "x"));
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  CHECK(code_of([&] { json::parse(deep, "x"); }) == Exit::data);
}

TEST_CASE("parse_many reads JSON lines and concatenated documents") {
  auto docs = json::parse_many("{\"a\":1}\n{\"a\":2}{\"a\":3}\n", "x");
  REQUIRE(docs.size() == 3);
  CHECK(docs[2].at("a").as_int64() == 3);
  CHECK(json::parse_many("  ", "x").empty());
}

TEST_CASE("numbers print as jq does, never 1E0") {
  CHECK(json::number_text(json::parse("1.0", "x")) == "1");
  CHECK(json::number_text(json::parse("0.25", "x")) == "0.25");
  CHECK(json::number_text(json::parse("12345678901234567890", "x")) == "12345678901234567890");
  CHECK(json::number_text(json::parse("-5", "x")) == "-5");
  CHECK(json::number_text(json::parse("1e100", "x")) == "1e+100");
}

TEST_CASE("strings are escaped for JSON, UTF-8 kept") {
  CHECK(json::quote("a\"b\\c\n\x01é") == "\"a\\\"b\\\\c\\n\\u0001é\"");
}

TEST_CASE("layouts are detected from text") {
  auto pretty = json::detect_layout("{\n    \"a\": 1\n}\n");
  CHECK(pretty.pretty);
  CHECK(pretty.indent == "    ");
  CHECK(pretty.final_newline);
  auto tabs = json::detect_layout("{\n\t\"a\":1\n}");
  CHECK(tabs.indent == "\t");
  CHECK_FALSE(tabs.space_after_colon);
  CHECK_FALSE(tabs.final_newline);
  auto python = json::detect_layout("{\"a\": 1, \"b\": 2}");
  CHECK_FALSE(python.pretty);
  CHECK(python.space_after_colon);
  CHECK(python.space_after_comma);
}

TEST_CASE("to_text writes jq's 2-space layout") {
  auto v = json::parse(R"({"a":{"b":[1,{}]},"c":[]})", "x");
  CHECK(json::to_text(v, json::default_layout()) ==
        "{\n  \"a\": {\n    \"b\": [\n      1,\n      {}\n    ]\n  },\n  \"c\": []\n}\n");
  CHECK(json::compact(v) == R"({"a":{"b":[1,{}]},"c":[]})");
}

TEST_CASE("paths: members, indices, [] and quoted names") {
  auto p = parse_path(".stages[1].name");
  REQUIRE(p.segments.size() == 3);
  CHECK(p.segments[1].kind == Segment::elem);
  CHECK(p.segments[1].index == 1);
  CHECK(parse_path("history.bd-001").segments[1].name == "bd-001");
  CHECK(parse_path(R"(.history["bd.7"].attempts)").segments[1].name == "bd.7");
  CHECK(parse_path(R"(["a\"b"])").segments[0].name == "a\"b");
  CHECK(parse_path(".[0]").segments[0].kind == Segment::elem);
  CHECK(parse_path(R"(."key")").segments[0].name == "key");
  CHECK(parse_path(".stages.[1]").segments.size() == 2);
  CHECK(parse_path(".").segments.empty());
  CHECK(parse_path(".a[]").has_all());
  CHECK(parse_path(".a.b[-1]").segments[2].index == -1);
}

TEST_CASE("malformed paths are usage errors") {
  for (const char* bad : {"", ".history[", ".a..b", "a[x]", "a]", "[\"open", ".a b", "a[99999999999999999999]"})
    CHECK(code_of([&] { parse_path(bad); }) == Exit::usage);
}

TEST_CASE("lookup: missing is null, through a scalar is bad data") {
  std::string t = R"({"a":{"b":[10,20]},"s":"x","n":null})";
  auto lookup = [&](const char* path) {
    Path p = parse_path(path);
    scan::Want w;
    w.add(p);
    w.settle();
    return textedit::lookup(t, scan::scan(t, w, "x"), p);
  };
  auto s = lookup(".a.b[-1]");
  REQUIRE(s[0]);
  CHECK(t.substr(s[0]->first, s[0]->second - s[0]->first) == "20");
  CHECK(!lookup(".a.b[5]")[0]);
  CHECK(!lookup(".n.deeper")[0]);
  CHECK(lookup(".a.b[]").size() == 2);
  CHECK(code_of([&] { lookup(".s.x"); }) == Exit::data);
  CHECK(code_of([&] { lookup(".s[]"); }) == Exit::data);
}

TEST_CASE("assignments parse into edits") {
  CHECK(parse_assignment("a=1").operand.as_string() == "1");
  CHECK(parse_assignment("a:=1").operand.as_int64() == 1);
  CHECK(parse_assignment("a=x=y").operand.as_string() == "x=y");
  CHECK(parse_assignment("tags[]=a").op == Edit::append);
  CHECK(parse_assignment("tags[]:={\"x\":1}").op == Edit::append);
  CHECK(parse_assignment("c?=x").op == Edit::set_if_missing);
  CHECK(parse_assignment("c?:=null").op == Edit::set_if_missing);
  CHECK(parse_assignment("n+=2").op == Edit::add);
  CHECK(parse_assignment("o*={\"k\":1}").op == Edit::merge);
  CHECK(parse_assignment("n*=2").op == Edit::multiply);
  for (const char* bad : {"justtext", "=x", "a:={not json", "n+=x", "a[].b=1", "a!=1", "o*=[1]", "o*=x", "o[]*={}"})
    CHECK(code_of([&] { parse_assignment(bad); }) == Exit::usage);
}

TEST_CASE("edits apply in order and create what is missing") {
  json::value doc = json::object();
  reference::edit_value(doc, parse_assignment("a.b.c:=1"));
  reference::edit_value(doc, parse_assignment("list[]:=1"));
  reference::edit_value(doc, parse_assignment("list[]:=2"));
  reference::edit_value(doc, parse_assignment("list[-1]:=3"));
  reference::edit_value(doc, parse_assignment("n+=2"));
  reference::edit_value(doc, parse_assignment("n+=0.5"));
  reference::edit_value(doc, parse_assignment("c?=first"));
  reference::edit_value(doc, parse_assignment("c?=second"));
  reference::edit_value(doc, delete_edit(".list[0]"));
  reference::edit_value(doc, delete_edit(".nothing.here"));
  CHECK(json::compact(doc) == R"({"a":{"b":{"c":1}},"list":[3],"n":2.5,"c":"first"})");
}

TEST_CASE("*= merges as jq's *: objects within objects merged, anything else replaced") {
  json::value doc = json::parse(R"({"o":{"x":1,"y":{"p":1,"q":2},"z":[1]},"n":null})", "x");
  reference::edit_value(doc, parse_assignment(R"(o*={"y":{"q":3,"r":4},"z":{"w":1},"new":true})"));
  reference::edit_value(doc, parse_assignment(R"(n*={"a":1})"));
  reference::edit_value(doc, parse_assignment(R"(missing.deep*={"b":{}})"));
  CHECK(json::compact(doc) == R"({"o":{"x":1,"y":{"p":1,"q":3,"r":4},"z":{"w":1},"new":true},"n":{"a":1},)"
                              R"("missing":{"deep":{"b":{}}}})");
  CHECK(code_of([&] { reference::edit_value(doc, parse_assignment(R"(o.x*={"a":1})")); }) == Exit::data);
}

TEST_CASE("a type clash is bad data, an absurd index too") {
  json::value doc = json::parse(R"({"s":"x","a":[1]})", "x");
  CHECK(code_of([&] { reference::edit_value(doc, parse_assignment("s.x=1")); }) == Exit::data);
  CHECK(code_of([&] { reference::edit_value(doc, parse_assignment("s+=1")); }) == Exit::data);
  CHECK(code_of([&] { reference::edit_value(doc, parse_assignment("s[]=1")); }) == Exit::data);
  CHECK(code_of([&] { reference::edit_value(doc, parse_assignment("a[999999999999]=1")); }) == Exit::data);
}

TEST_CASE("integer sums stay exact, overflow becomes a double") {
  json::value doc = json::parse(R"({"n":9223372036854775807})", "x");
  reference::edit_value(doc, parse_assignment("n+=1"));
  CHECK(doc.at("n").is_uint64());
  CHECK(json::number_text(doc.at("n")) == "9223372036854775808");
}

TEST_CASE("numbers out of range are not valid JSON; underflow and 0e400 read as 0") {
  CHECK(code_of([] { json::parse("1e400", "x"); }) == Exit::data);
  CHECK(code_of([] { json::parse("[-1e400]", "x"); }) == Exit::data);
  CHECK(code_of([] { json::parse_many("{\"a\":1}\n{\"a\":1e999}", "x"); }) == Exit::data);
  CHECK(code_of([] { validate_json("{\"a\":1e400}", "x"); }) == Exit::data);
  try {
    json::parse("{\"a\": 1e400}", "f.json");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("'f.json': not valid JSON: number out of range at line 1") == 0);
  }
  for (const char* zero : {"0e400", "-0e400", "0.000e99999", "1e-400"}) {
    json::value v = json::parse(zero, "x");
    REQUIRE(v.is_double());
    CHECK(v.get_double() == 0.0);
    CHECK_NOTHROW(validate_json(zero, "x"));
  }
  CHECK(code_of([] { json::number_text(json::value(std::numeric_limits<double>::infinity())); }) == Exit::data);
}

TEST_CASE("a number reads as the double nearest to its text, past Boost.JSON 1.81's rounding") {
  // each is one unit in the last place off in Boost.JSON 1.81's own reading
  const char* text = "129223372036854775807345678901234.5678901234567890";
  CHECK(json::parse(text, "x").get_double() == 1.2922337203685477e+32);
  CHECK(json::nearest_double(text) == std::strtod(text, nullptr));
  CHECK(json::parse("[1123.5678109234567]", "x").get_array()[0].get_double() == 1123.5678109234567);
  // the edges of the range, judged as strtod judges them
  CHECK(json::nearest_double("1.7976931348623157e308") == std::numeric_limits<double>::max());
  CHECK(std::isinf(json::nearest_double("1.7976931348623159e308")));
  CHECK(code_of([] { json::parse("1.7976931348623159e308", "x"); }) == Exit::data);
  CHECK(code_of([] { validate_json("[-1.7976931348623159e308]", "x"); }) == Exit::data);
  CHECK(json::nearest_double("4.9e-324") == std::numeric_limits<double>::denorm_min());
  CHECK(json::nearest_double("2e-324") == 0.0);
  CHECK(std::signbit(json::nearest_double("-1e-400")));
}

// issue 24: nearest_double reads numbers without strtod (Clinger's fast
// path, else sys/base/decimal's exact midpoints): the same double as strtod for
// every text, on both sides of the fast path's edges (15 digits, 10^22),
// at ties and the ends of the range, and with -0
TEST_CASE("nearest_double is strtod's double, on and off its fast path") {
  std::vector<std::string> texts = {"0",
                                    "-0",
                                    "1",
                                    "-1",
                                    "0.1",
                                    "0.3",
                                    "1e22",
                                    "1e23",
                                    "1e-22",
                                    "1e-23",
                                    "123456789012345",
                                    "1234567890123456",
                                    "9007199254740993",
                                    "0.000000000000001",
                                    "3.14159265358979",
                                    "-2.5e-3",
                                    "1E+5",
                                    "5e-0",
                                    "1e0001",
                                    "1e308",
                                    "1e-308",
                                    "17976931348623157e292",
                                    "0.1e-21",
                                    "123.456e-20",
                                    "999999999999999e22",
                                    "9007199254740992.5",
                                    "2.2250738585072011e-308",
                                    "2.4703282292062327e-324",
                                    "-2.4703282292062328e-324",
                                    "1.7976931348623158e308",
                                    "-1.7976931348623159e308",
                                    "-0.0e5",
                                    "1e-999999999",
                                    "0." + std::string(800, '0') + std::string(900, '4') + "e800"};
  std::uint64_t x = 88172645463325252u;  // xorshift: many texts, the same on every run
  for (int k = 0; k < 20000; ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::string t = std::to_string(x >> (x % 50 + 14));
    if (x & 2 && t.size() > 1) t.insert(1 + (x >> 8) % (t.size() - 1), ".");  // never first or last
    if (x & 1) t.insert(0, "-");
    if (x & 4) t += "e" + std::to_string(static_cast<int>((x >> 20) % 61) - 30);
    texts.push_back(t);
  }
  for (const std::string& t : texts) {
    CAPTURE(t);
    double want = std::strtod(t.c_str(), nullptr), got = json::nearest_double(t);
    CHECK(std::memcmp(&want, &got, sizeof want) == 0);  // bit for bit: -0 too
  }
}

TEST_CASE("a string can never pass for a kept number literal") {
  // fuzz finding assign/string-spelling-the-literal-marker: the fuzzer
  // learnt the marker of kept literals and wrote it in a string. The marker
  // starts with 0xFF, which no valid UTF-8 text holds.
  std::string marked(json::number_literal("1e2").get_string());
  REQUIRE(static_cast<unsigned char>(marked[0]) == 0xff);
  std::string rest = marked.substr(1);  // the marker's ASCII tail and the literal
  json::value v = json::parse("{\"a\":\"" + rest + "\"}", "x", {}, json::Literals::as_written);
  CHECK_FALSE(json::is_number_literal(v.at("a")));
  CHECK(json::compact(v) == "{\"a\":\"" + rest + "\"}");
  CHECK(code_of([&] { json::parse("\"" + marked + "\"", "x"); }) == Exit::data);
  CHECK(code_of([&] { parse_assignment("a=" + marked); }) == Exit::usage);
}

TEST_CASE("number literals keep their text where asked") {
  using json::Literals;
  const char* big = "123456789012345678901234567890";
  CHECK(json::parse(big, "x").is_double());
  json::value b = json::parse(big, "x", {}, Literals::big_integers);
  CHECK(json::is_number_literal(b));
  CHECK(json::raw_text(b) == big);
  CHECK(json::compact(json::parse("[1.0,1e2]", "x", {}, Literals::big_integers)) == "[1,100]");
  CHECK(json::compact(json::parse("[1.0,1e2,-0,5,0.5]", "x", {}, Literals::as_written)) == "[1.0,1e2,-0,5,0.5]");
  json::value five = json::parse("[5,0.5]", "x", {}, Literals::as_written);
  CHECK(five.as_array()[0].is_int64());
  CHECK(five.as_array()[1].is_double());  // its shortest text is its text: no literal needed
  CHECK(json::is_numeric(b));
  CHECK(std::string(type_name(b)) == "number");
  // a file's string can never pass for a literal: the tag is random per run
  json::value s = json::parse("\"\\u0000lk00000000#1\"", "x");
  CHECK(!json::is_number_literal(s));
  CHECK(json::compact(s) == "\"\\u0000lk00000000#1\"");
}

TEST_CASE("depth counts nested containers") {
  CHECK(json::depth(json::parse("1", "x")) == 0);
  CHECK(json::depth(json::parse("[]", "x")) == 1);
  CHECK(json::depth(json::parse("{\"a\":[[1],{}]}", "x")) == 3);
}

TEST_CASE("assignments refuse what could not be read back: out of range, not UTF-8, too deep") {
  CHECK(code_of([] { parse_assignment("a:=1e400"); }) == Exit::usage);
  CHECK(code_of([] { parse_assignment("a+=-1e400"); }) == Exit::usage);
  CHECK(code_of([] { parse_assignment("a[]:=[1e400]"); }) == Exit::usage);
  CHECK(code_of([] { parse_expectation("a:=1e400"); }) == Exit::usage);
  CHECK(code_of([] { parse_assignment("k\xff:=1"); }) == Exit::usage);
  CHECK(code_of([] { parse_assignment("[\"k\xc0\x80\"]=x"); }) == Exit::usage);
  CHECK(code_of([] { parse_assignment("[\"\\ud800\"]=x"); }) == Exit::usage);
  CHECK(code_of([] { now_edit("t\xed\xa0\x80", false); }) == Exit::usage);
  CHECK(code_of([] { delete_edit("k\xff"); }) == Exit::usage);
  std::string deep;
  for (int i = 0; i < 999; ++i) deep += "a.";
  CHECK(code_of([&] { parse_assignment(deep + "b:=1"); }) == Exit::ok);
  CHECK(code_of([&] { parse_assignment(deep + "b:=[]"); }) == Exit::usage);
  CHECK(code_of([&] { parse_assignment(deep + "b[]:=1"); }) == Exit::usage);
  CHECK(code_of([&] { parse_assignment(deep + "b.c:=1"); }) == Exit::usage);
}

TEST_CASE("sums are exact on big integers and refuse to overflow a double") {
  auto sum = [](const char* doc, const char* assignment) {
    json::value v = json::parse(doc, "x", {}, json::Literals::as_written);
    reference::edit_value(v, parse_assignment(assignment));
    return json::compact(v);
  };
  CHECK(sum("{\"a\":123456789012345678901234567890}", "a+=1") == "{\"a\":123456789012345678901234567891}");
  CHECK(sum("{\"a\":9223372036854775807}", "a+=1") == "{\"a\":9223372036854775808}");
  CHECK(sum("{\"a\":18446744073709551615}", "a+=1") == "{\"a\":18446744073709551616}");
  CHECK(sum("{\"a\":-9223372036854775808}", "a+=-1") == "{\"a\":-9223372036854775809}");
  CHECK(sum("{\"a\":1.5}", "a+=1e2") == "{\"a\":101.5}");
  CHECK(sum("{}", "a+=1e2") == "{\"a\":100}");
  CHECK(code_of([&] { sum("{\"a\":1e308}", "a+=1e308"); }) == Exit::data);
  CHECK(code_of([&] { sum("{\"a\":-1.7e308}", "a+=-1e308"); }) == Exit::data);
}

TEST_CASE("equal compares numbers by value, whatever their spelling or type") {
  auto lit = [](const char* t) { return json::number_literal(t); };
  CHECK(json::equal(json::value(100), lit("1e2")));
  CHECK(json::equal(json::value(2.0), json::value(2)));
  CHECK(json::equal(lit("0.001"), lit("1e-3")));
  CHECK(json::equal(lit("-0"), json::value(0)));
  CHECK(json::equal(lit("1200.000"), lit("12e2")));
  CHECK(json::equal(lit("123456789012345678901234567890"), lit("1.2345678901234567890123456789e29")));
  CHECK_FALSE(json::equal(lit("123456789012345678901234567890"), json::value(1.2345678901234568e+29)));
  CHECK_FALSE(json::equal(json::value(1), json::value("1")));
  CHECK_FALSE(json::equal(lit("-1"), json::value(1)));
  CHECK(json::equal(json::parse(R"({"a":[1,{"b":2.50}],"c":null})", "t"),
                    json::parse(R"({"c":null,"a":[1.0,{"b":25e-1}]})", "t")));
  CHECK_FALSE(json::equal(json::parse(R"({"a":[1]})", "t"), json::parse(R"({"a":[1,1]})", "t")));
}

TEST_CASE("to_utf8: valid text as it is, each stray byte as U+FFFD", "[json]") {
  using loopkit::json::to_utf8;
  CHECK(to_utf8("plain \xc3\xa9") == "plain \xc3\xa9");
  CHECK(to_utf8("a\xff"
                "b") ==
        "a\xef\xbf\xbd"
        "b");
  CHECK(to_utf8("\xc0\x80") == "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong
  CHECK(to_utf8("\xe2\x82") == "\xef\xbf\xbd\xef\xbf\xbd");                  // cut short
  CHECK(to_utf8("\xed\xa0\x80") == "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
}
