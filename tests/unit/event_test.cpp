// The numbering and field rules of core/event.
#include <catch2/catch.hpp>

#include <unistd.h>

#include "core/log/event.hpp"
#include "scratch.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

TEST_CASE("seq_prefix reads only a whole leading seq member") {
  CHECK(event::seq_prefix(R"({"seq":42,"ts":"x"})") == 42);
  CHECK(event::seq_prefix(R"({"seq":7})") == 7);
  CHECK_FALSE(event::seq_prefix(R"({"seq":4)"));  // torn inside the number
  CHECK_FALSE(event::seq_prefix(R"({"ts":1,"seq":4})"));
  CHECK_FALSE(event::seq_prefix(R"({"seq":-1,)"));
}

TEST_CASE("next_seq: the last complete line's seq plus one") {
  CHECK(event::next_seq("", true) == 1);
  CHECK(event::next_seq("{\"seq\":1}\n{\"seq\":2}\n", true) == 3);
  // a line with another member order is parsed whole
  CHECK(event::next_seq("{\"seq\":1}\n{\"type\":\"t\",\"seq\":9}\n", true) == 10);
  // a torn last line: its seq counts when its number is whole
  CHECK(event::next_seq("{\"seq\":1}\n{\"seq\":2,\"ts\":\"2", true) == 3);
  CHECK(event::next_seq("{\"seq\":1}\n{\"seq\":2", true) == 2);
  // garbage after the last event is passed over
  CHECK(event::next_seq("{\"seq\":5}\nnot json\n", true) == 6);
}

TEST_CASE("next_seq asks for more when the tail does not reach a line's start") {
  CHECK_FALSE(event::next_seq("xxxx\"}\n", false));
  CHECK_FALSE(event::next_seq("x\"}\n{\"seq\":2", false));
  CHECK(event::next_seq("x\"}\n{\"seq\":3}\n", false) == 4);
}

TEST_CASE("fields: KEY=TEXT and KEY:=JSON, the JSON text kept on one line") {
  auto f = event::parse_field("n:= [1,\n 2e2 , \"a b\"]");
  CHECK(f.key == "n");
  CHECK(f.json == "[1,2e2,\"a b\"]");
  CHECK(event::parse_field("s=x \"y\"").json == "\"x \\\"y\\\"\"");
  CHECK_THROWS_AS(event::parse_field("seq:=1"), Error);
  CHECK_THROWS_AS(event::parse_field("a.b=1"), Error);
  CHECK_THROWS_AS(event::parse_field("a[]=1"), Error);
  CHECK_THROWS_AS(event::parse_field("a+=1"), Error);
}

TEST_CASE("line_text: the envelope first, a repeated key once with its last value") {
  event::AppendRequest r;
  r.type = "t";
  r.fields = {{"a", "1"}, {"b", "2"}, {"a", "3"}};
  CHECK(event::line_text(4, "2025-01-10T10:05:30Z", "s", r) ==
        "{\"seq\":4,\"ts\":\"2025-01-10T10:05:30Z\",\"type\":\"t\",\"session\":\"s\",\"b\":2,\"a\":3}\n");
}

TEST_CASE("check_type refuses spaces and empty types") {
  CHECK_NOTHROW(event::check_type("iteration-done.v2:x_y"));
  CHECK_THROWS_AS(event::check_type(""), Error);
  CHECK_THROWS_AS(event::check_type("a b"), Error);
}

// issue 22: the seq after INT64_MAX was negative
TEST_CASE("next_seq refuses to number past the largest seq, never overflowing") {
  const std::string last = "{\"seq\":9223372036854775807}\n";
  CHECK(event::next_seq("{\"seq\":9223372036854775806}\n", true) == INT64_MAX);
  try {
    event::next_seq(last, true);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::data);
    CHECK(std::string(e.what()) == "seq 9223372036854775807 is the last an event log can number; start a new log");
  }
  // a seq past int64 counts as the largest
  CHECK_THROWS_AS(event::next_seq("{\"seq\":18446744073709551615}\n", true), Error);
}

// issue 22: a log truncated while event-show had it mapped killed it with
// SIGBUS; here the sink truncates it after the first event, deterministically
TEST_CASE("a log truncated under event-show is exit 4 naming it, never a signal") {
  testing::Scratch d("event-test");
  std::string log;
  for (int i = 1; i <= 2000; ++i)
    log += event::line_text(i, "2025-01-10T00:00:00Z", "s", event::AppendRequest{"tick", "s", {}, false});
  d.write("e.jsonl", log);
  const std::string path = d.path("e.jsonl");
  int printed = 0;
  std::vector<std::string> warnings;
  event::ShowOptions o;
  o.json = true;
  auto sink = [&](std::string_view) {
    if (++printed == 1) REQUIRE(truncate(path.c_str(), 100) == 0);
  };
  try {
    event::show(path, o, sink, [&](std::string_view w) { warnings.emplace_back(w); });
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == Exit::system);
    CHECK(std::string(e.what()) == "cannot read '" + path + "': the file shrank while it was read");
  }
  CHECK(printed < 100);  // the events on the first page, at most
  CHECK(warnings.empty());
}

// issue 24: a last line that does not start with its seq is read whole by
// the lock tools' reader (read_json_members), as json::parse read it before
TEST_CASE("next_seq reads a last line whole as json::parse did: names escaped or twice, seqs past int64") {
  CHECK(event::next_seq("{\"type\":\"x\",\"s\\u0065q\":7}\n", true) == 8);
  CHECK(event::next_seq("{\"x\":1,\"seq\":9,\"seq\":4}\n", true) == 5);
  CHECK(event::next_seq("{\"seq\":2}\n{\"x\":1,\"seq\":9.0}\n", true) == 3);
  CHECK(event::next_seq("{\"seq\":2}\n{\"x\":1,\"seq\":9,\"seq\":\"9\"}\n", true) == 3);
  CHECK(event::next_seq("{\"seq\":2}\n {\"seq\":9}\n", true) == 3);  // an event starts its line
  CHECK(event::next_seq("{\"seq\":2}\n{\"x\":1e400,\"seq\":9}\n", true) == 3);
  CHECK(event::next_seq("{\"x\":1,\"seq\":-0}\n", true) == 1);
  CHECK_THROWS_AS(event::next_seq("{\"x\":1,\"seq\":18446744073709551615}\n", true), Error);
  CHECK(event::next_seq("{\"x\":1,\"seq\":18446744073709551616}\n", true) == 1);  // a double: not a seq
}
