// core/query: the jq forms beyond paths, parsed and evaluated as jq does
// (each expected answer below is what jq 1.6 prints with -c).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/query.hpp"
#include "sys/error.hpp"

using namespace loopkit;

namespace {

const char* const doc = R"({"status":"running","iteration":3,"iteration_completed":2,
  "stages":[{"name":"plan","status":"completed","n":1},{"name":"work","status":"failed","n":2},
            {"name":"check","status":"failed","n":1.0}],
  "odd key":{"x":[1,2]},"none":null,"no":false})";

// every value the expression yields, one compact JSON text each
std::vector<std::string> run(const std::string& expression, const char* text = doc) {
  json::value input = json::parse(text, "test");
  std::vector<std::string> out;
  query::evaluate(query::parse(expression), input, [&](const json::value& v) { out.push_back(json::compact(v)); });
  return out;
}

using Lines = std::vector<std::string>;

Exit code_of(const std::string& expression) {
  try {
    run(expression);
  } catch (const Error& e) {
    return e.code();
  }
  return Exit::ok;
}

}  // namespace

TEST_CASE("is_expression: what a plain path cannot hold, outside quoted names", "[query]") {
  for (const char* e : {"{a, b}", ".a | .b", ".a|{b}", "select(.a)", ".a==1", ".a!=1", ". ", "[.a]", "{}"})
    CHECK(query::is_expression(e));
  for (const char* p : {".a", "a.b", ".history.bd-001", R"(["a b"])", R"x(.["x|{y}(z)"])x", "[0]", "[]", ".a//b", "."})
    CHECK_FALSE(query::is_expression(p));
}

TEST_CASE("object construction from names, quoted names and paths, in the order written", "[query]") {
  CHECK(run("{iteration, iteration_completed, status}") ==
        Lines{R"({"iteration":3,"iteration_completed":2,"status":"running"})"});
  CHECK(run(R"({name: .stages[0].name, "odd key", s: "lit", n: 1.5})") ==
        Lines{R"({"name":"plan","odd key":{"x":[1,2]},"s":"lit","n":1.5})"});
  CHECK(run("{missing, none}") == Lines{R"({"missing":null,"none":null})"});  // jq: missing reads as null
  CHECK(run("{a: .iteration, a: .status}") == Lines{R"({"a":"running"})"});   // the last wins
  CHECK(run("{}") == Lines{"{}"});
}

TEST_CASE("a pipe feeds each value on; [] makes several; objects multiply, first member outermost", "[query]") {
  CHECK(run(".stages[] | {name, status}") == Lines{R"({"name":"plan","status":"completed"})",
                                                   R"({"name":"work","status":"failed"})",
                                                   R"({"name":"check","status":"failed"})"});
  CHECK(run(R"(.["odd key"] | {a: .x[], b: .x[]})") ==
        Lines{R"({"a":1,"b":1})", R"({"a":1,"b":2})", R"({"a":2,"b":1})", R"({"a":2,"b":2})"});
  CHECK(run(". | .stages[-1] | .name") == Lines{R"("check")"});
  CHECK(run("[.stages[].n]") == Lines{"[1,2,1]"});
  CHECK(run("[]") == Lines{"[]"});
  CHECK(run(".status, .iteration") == Lines{R"("running")", "3"});
}

TEST_CASE("select with == and != on array items, numbers by value", "[query]") {
  CHECK(run(R"(.stages[] | select(.status == "failed") | .name)") == Lines{R"("work")", R"("check")"});
  CHECK(run(R"(.stages[] | select(.status != "failed") | .name)") == Lines{R"("plan")"});
  CHECK(run(".stages[] | select(.n == 1) | .name") == Lines{R"("plan")", R"("check")"});  // 1.0 == 1
  CHECK(run("select(.none == null) | .iteration") == Lines{"3"});
  CHECK(run(".stages[] | select(.nope) | .name").empty());
  // jq's order: the right side's values outermost
  CHECK(run("(1,2) == (1,1,2)") == Lines{"true", "false", "true", "false", "false", "true"});
}

TEST_CASE("// and empty: the alternative of null, false or nothing", "[query]") {
  CHECK(run(".none // empty").empty());
  CHECK(run(".none // .no // 7") == Lines{"7"});
  CHECK(run(".status // empty") == Lines{R"("running")"});
  CHECK(run("(.none, .iteration, .no) // 0") == Lines{"3"});
}

TEST_CASE("jq's reading of absent places: null, not an error; wrong types: exit 3", "[query]") {
  CHECK(run(".none.a.b") == Lines{"null"});
  CHECK(run(".stages[9]") == Lines{"null"});
  CHECK(code_of(".status.a") == Exit::data);
  CHECK(code_of(".none[]") == Exit::data);
  CHECK(code_of(".stages.a") == Exit::data);
  CHECK(code_of(".status[0]") == Exit::data);
  CHECK(code_of(".status.x // 1") == Exit::data);  // jq 1.6: an error on the left stops all
}

TEST_CASE("malformed expressions are exit 2 and name themselves", "[query]") {
  for (const char* bad : {"{a", "{a:}", ".a |", "select(.a", ".a == ", "length", "{1: .a}", ".a.", "(.a", R"({"a)",
                          ".a ==== 1", "[.a", ".a = 1"}) {
    INFO(bad);
    CHECK_THROWS_AS(query::parse(bad), Error);
    try {
      query::parse(bad);
    } catch (const Error& e) {
      CHECK(e.code() == Exit::usage);
      CHECK(std::string(e.what()).find("malformed") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(query::parse(std::string(1000, '(') + "." + std::string(1000, ')')), Error);
  // long chains: each operator is a frame of the evaluation
  auto chain = [](const char* op, int n) {
    std::string t = ".";
    for (int i = 0; i < n; ++i) t.append(op).append(".");
    return t;
  };
  CHECK_THROWS_AS(query::parse(chain(" // ", 2000)), Error);
  CHECK_NOTHROW(query::parse(chain(" // ", 900)));
  CHECK_THROWS_AS(query::parse(chain("|", 2000)), Error);
}
