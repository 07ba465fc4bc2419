// lib/core/log/event_line and event_field: event lines printed and fields
// checked without Boost.JSON (issue 24), held to what the document-based
// code printed and said (kept here as the reference).
#include <catch2/catch.hpp>
#include <algorithm>
#include <optional>
#include <random>
#include <string>

#include "core/edit/assign.hpp"
#include "core/log/event.hpp"
#include "core/log/event_line.hpp"
#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "sys/base/error.hpp"
#include "mutations.hpp"

using namespace loopkit;

namespace {

// What event-show printed of a line before: its text and its type, or
// nullopt for a line that is not an event.
struct Shown {
  std::string text, type, session;
  int64_t seq;
};
std::optional<Shown> reference(std::string_view line) {
  if (line.empty() || line.front() != '{') return std::nullopt;  // an event starts its line
  json::value v;
  try {
    v = json::parse(line, "event");
  } catch (const Error&) {
    return std::nullopt;
  }
  if (!v.is_object()) return std::nullopt;
  const json::object& o = v.get_object();
  const json::value* seq = o.if_contains("seq");
  if (!seq || !(seq->is_int64() || seq->is_uint64())) return std::nullopt;
  auto member = [&](std::string_view name) {
    const json::value* m = o.if_contains(name);
    return m ? json::raw_text(*m) : std::string();
  };
  auto shown = [&](std::string_view name) {
    std::string s = member(name);
    return s.empty() ? std::string("-") : s;
  };
  std::string out = shown("seq") + " " + shown("ts") + " " + shown("type") + " " + shown("session");
  for (const auto& kv : o) {
    std::string_view k = kv.key();
    if (k == "seq" || k == "ts" || k == "type" || k == "session") continue;
    std::string text;
    if (kv.value().is_string()) {
      std::string_view s = kv.value().get_string();
      bool bare = !s.empty() && std::none_of(s.begin(), s.end(), [](char c) {
        return static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\\' || c == 0x7f;
      });
      text = bare ? std::string(s) : json::quote(s);
    } else {
      text = json::compact(kv.value());
    }
    out += ' ';
    out += k;
    out += '=';
    out += text;
  }
  int64_t n = seq->is_int64() ? seq->get_int64() : static_cast<int64_t>(seq->get_uint64());
  return Shown{out, member("type"), member("session"), n};
}

void shown_alike(std::string_view line) {
  INFO(std::string(line));
  const std::optional<Shown> expected = reference(line);
  const std::optional<event::EventLine> got = event::EventLine::read(line);
  REQUIRE(got.has_value() == expected.has_value());
  if (!got) return;
  CHECK(got->text() == expected->text);
  CHECK(got->member("type") == expected->type);
  CHECK(got->member("session") == expected->session);
  CHECK(got->seq() == expected->seq);
}

const char* const lines[] = {
    R"({"seq":1,"ts":"2025-01-10T10:05:30Z","type":"iteration-done","session":"auth","n":3,"ok":true})",
    R"({"seq":2,"ts":"t","type":"a b","session":"s","n":1.0,"m":-0,"e":1E2,"s":"x y","q":"\"","d":"a)"
    "\x7f"
    R"("})",
    R"({"type":"x","seq":3,"nested":{"a":1,"a":2,"b":[1, 2.50 ,{"c" : "d\u0041"}]},"u":"\u00e9\/","t":"\t"})",
    R"({"seq":4,"seq":5,"s\u0065ssion":"esc","type":"\u0074","big":18446744073709551616,"k\"ey":""})",
    R"({"seq":18446744073709551615,"ts":5,"session":[1,{"a":"b"}],"type":null})",
};

// What parse_field said before: the field, or the error's message.
std::string field_reference(std::string_view text) {
  try {
    Edit e = parse_assignment(text);
    if (e.op != Edit::set || e.path.segments.size() != 1 || e.path.segments[0].kind != Segment::key)
      return "malformed field " + quoted(text) + ": fields are KEY=TEXT or KEY:=JSON";
    for (std::string_view r : {"seq", "ts", "type", "session"})
      if (e.path.segments[0].name == r) return "field " + quoted(r) + " is set by event-append itself";
    return "ok " + e.path.segments[0].name;
  } catch (const Error& e) {
    return e.what();
  }
}

void field_alike(std::string_view text) {
  INFO(std::string(text));
  std::string got;
  try {
    got = "ok " + event::parse_field(text).key;
  } catch (const Error& e) {
    CHECK(e.code() == Exit::usage);
    got = e.what();
  }
  CHECK(got == field_reference(text));
}

}  // namespace

TEST_CASE("event lines: the text, type, session and seq of every changed line as before", "[event]") {
  static const unsigned char bytes[] = {'"', '\\', '{', '}', '[', ']', ',', ':', ' ',  '0',  '1', '-',
                                        '.', 'e',  'E', 'u', 's', 'q', 't', 'n', 0x7f, 0x01, 0xc3};
  for (std::string_view seed : lines)
    for_each_mutation(seed, bytes, [](const std::string& text, std::size_t) { shown_alike(text); });
}

TEST_CASE("event fields: checked in parse_assignment's order, with its messages", "[event]") {
  for (const char* f :
       {"a=1",          "a:=1",           "a:= [1,",       "a+=1",    "a+=x",   "a+= ",      "a*={}",     "a*=[]",
        "a*=bad",       "a?=x",           "a?:=1",         "a?:=bad", "a[]=x",  "a[]:=1",    "a[]:=bad",  "a[][]=x",
        "a[].b=1",      ".a=1",           ".=1",           "=1",      "a",      "a.b=1",     "a.b:=bad",  "[\"a b\"]=1",
        "[\"a\\x\"]=1", "[0]=1",          "seq=1",         "ts:=1",   "type=x", "session=x", "a:=",       "a:=1e400",
        "a:=-0",        "a:=\"\\ud800\"", "a:={\"a\":1,}", "a:=01",   "a=\xff", "a%=1",      "b=\xc3\xa9"})
    field_alike(f);
  field_alike("a:=" + std::string(999, '[') + std::string(999, ']'));
  field_alike("a:=" + std::string(1000, '[') + std::string(1000, ']'));
  field_alike("a[]:=" + std::string(999, '[') + std::string(999, ']'));
  std::string deep_object = "a*=";
  for (int i = 0; i < 1000; ++i) deep_object += "{\"a\":";
  field_alike(deep_object + "1" + std::string(1000, '}'));
}

TEST_CASE("event fields: random changes are checked as parse_assignment checks them", "[event]") {
  std::mt19937 random(24);  // fixed: the same cases every run
  static const char pool[] = "\"\\{}[],:=+?*. \n0123456789-eEutfnax\x7f\xc3\xff";
  const char* const seeds[] = {"a:={\"x\":[1,2e2,\"a b\"]}", "[\"k\\u0041\"]=text", "a?:=[1]", "n+=1.5"};
  for (int round = 0; round < 5000; ++round) {
    field_alike(mutated(random, seeds[random() % std::size(seeds)], pool));
  }
}
