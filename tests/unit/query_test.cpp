// core/state/query: the jq forms beyond paths, parsed and evaluated as jq does
// (each expected answer below is what jq 1.6 prints with -c).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/json/json.hpp"
#include "core/state/query.hpp"
#include "sys/base/error.hpp"

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

TEST_CASE("issue 39: operators with or without spaces, jq's precedence and order", "[query]") {
  const char* d = R"({"it":5,"n":3,"pid":null,"s":"abc","l":[1,2,3]})";
  CHECK(run(".n-1", d) == Lines{"2"});
  CHECK(run("select(.it>3)|.n", d) == Lines{"3"});
  CHECK(run("select(.it<3)", d).empty());
  CHECK(run("select(.it%2 == 1)|.it", d) == Lines{"5"});
  CHECK(run(".pid//empty", d).empty());
  CHECK(run("2+3*4", d) == Lines{"14"});
  CHECK(run("1-2-3", d) == Lines{"-4"});
  CHECK(run("8/2/2", d) == Lines{"2"});
  CHECK(run("-.n*2", d) == Lines{"-6"});
  CHECK(run("(1,2)+(10,20)", d) == Lines{"11", "12", "21", "22"});
  CHECK(run("true or false and false", d) == Lines{"true"});
  CHECK(run("(true,false) and (true,false)", d) == Lines{"true", "false", "false"});
  CHECK(run(".n|not", d) == Lines{"false"});
  CHECK(run("[null,false,true,0,\"a\",[],{}]|[.[0]<.[1],.[3]<.[4],.[5]<.[6]]", d) == Lines{"[true,true,true]"});
  CHECK(run("{\"a\":2}<{\"b\":1}", d) == Lines{"true"});
  CHECK(run(".s/\"b\"", d) == Lines{R"(["a","c"])"});
  CHECK(run(".l-[2]", d) == Lines{"[1,3]"});
  CHECK(run(".s*0", d) == Lines{"null"});
  CHECK(run(".it % -2", d) == Lines{"1"});
  CHECK(run(".it#note", d) == Lines{"5"});
  CHECK(run(R"(.["a-b"])", R"({"a-b":7})") == Lines{"7"});
  CHECK(code_of(".it/0") == Exit::data);
  CHECK(code_of(".none-1") == Exit::data);
  CHECK(code_of(".a-b") == Exit::usage);
  CHECK(code_of("1<2<3") == Exit::usage);
  CHECK(code_of("{a: .x // 1}") == Exit::usage);  // jq's object values are terms
  CHECK(code_of(".a |= 1") == Exit::usage);
  CHECK(query::try_parse(".history.bd-001.attempts").jq_cannot_read);
  // jq rejects .a-b when it compiles (b is no function): no meaning in jq
  CHECK(query::try_parse(".a-b").jq_cannot_read);
}

TEST_CASE("issue 39: read_operand: jq's reading wherever jq has one, loopkit's paths elsewhere", "[query]") {
  CHECK(query::read_operand(".n-1").expression);
  CHECK(query::read_operand(".a.b").path.segments.size() == 2);
  CHECK(query::read_operand(".history.bd-001.status").path.segments[1].name == "bd-001");
  CHECK(query::read_operand("history.bd-001").path.segments[1].name == "bd-001");
  CHECK(query::read_operand(R"(["a b"])").path.segments[0].name == "a b");
  CHECK(query::read_operand("status//running").text_default == "running");
  CHECK(query::read_operand(".status//running").text_default == "running");
  CHECK(query::read_operand("pid//empty").expression);
  // no meaning in jq: the contract's bare name a-b
  CHECK(query::read_operand(".a-b").path.segments[0].name == "a-b");
}

TEST_CASE("an operator over paths that is also a loopkit path: jq's value, else the member it names", "[query]") {
  const char* beads = R"({"n":3,"history":{"bd-001":{"s":"done"},"x-1-2":1,"bd":5},"h2":{"bd-001":2}})";
  CHECK(run(".n-1", beads) == Lines{"2"});
  CHECK(run(".history.bd-001", beads) == Lines{"4"});  // jq's: .history.bd is 5
  CHECK(run(".h2.bd-001", beads) == Lines{"2"});       // jq's is null - 1: the member
  CHECK(run(".history.x-1-2", beads) == Lines{"1"});
  CHECK(run("[.h2.bd-001 ] | .[0]", beads) == Lines{"2"});
  CHECK(query::spelled_path(query::parse(".h2.bd-001")) != nullptr);
  CHECK(query::spelled_path(query::parse(".n - 1")) == nullptr);
  CHECK(query::spelled_path(query::parse(".n")) == nullptr);
  CHECK_THROWS(run(".h2.bd-002", beads));
  CHECK_THROWS(run(".n - 1 | .h2.x - 1", beads));
}
