// core/state/complete: the paths offered for a word, as the shells' completion
// gets them from state-get --complete-path.
#include <catch2/catch.hpp>

#include "core/state/complete.hpp"
#include "scratch.hpp"

using loopkit::complete_path;
using Paths = std::vector<std::string>;

TEST_CASE("complete_path: names and indices after the word's last segment, as typed", "[complete]") {
  loopkit::testing::Scratch s;
  s.write("s.json", R"({"status":"run","stages":[{"name":"a"},{"name":"b"}],"odd key":1,"q\"x":2,"a.b":3,)"
                    R"("$v":4,"st":null})");
  const std::string f = s.path("s.json");
  CHECK(complete_path(f, "st") == Paths{"status", "stages", "st"});
  CHECK(complete_path(f, ".sta") == Paths{".status", ".stages"});
  CHECK(complete_path(f, "stages[") == Paths{"stages[0]", "stages[1]"});
  CHECK(complete_path(f, "stages[1") == Paths{"stages[1]"});
  CHECK(complete_path(f, "stages[1].") == Paths{"stages[1].name"});
  CHECK(complete_path(f, "stages.") == Paths{"stages.[0]", "stages.[1]"});
  // what a bare segment cannot spell is quoted, escapes and all
  CHECK(complete_path(f, "[") == Paths{R"(["status"])", R"(["stages"])", R"(["odd key"])", R"(["q\"x"])", R"(["a.b"])",
                                       R"(["$v"])", R"(["st"])"});
  CHECK(complete_path(f, ".o") == Paths{R"(.["odd key"])"});  // matched by its name, offered quoted
  CHECK(complete_path(f, ".[\"o") == Paths{R"(.["odd key"])"});
  CHECK(complete_path(f, "[\"o") == Paths{R"(["odd key"])"});
  CHECK(complete_path(f, ".") ==
        Paths{".status", ".stages", R"(.["odd key"])", R"(.["q\"x"])", R"(.["a.b"])", R"(.["$v"])", ".st"});
}

TEST_CASE("complete_path: nothing, and no error, for what cannot be completed", "[complete]") {
  loopkit::testing::Scratch s;
  s.write("s.json", R"({"a":"text","n":[]})");
  s.write("bad.json", R"({"a":)");
  CHECK(complete_path(s.path("s.json"), "a.").empty());
  CHECK(complete_path(s.path("s.json"), "n[").empty());
  CHECK(complete_path(s.path("s.json"), "zz.").empty());
  CHECK(complete_path(s.path("s.json"), "a]]").empty());
  CHECK(complete_path(s.path("missing.json"), "").empty());
  CHECK(complete_path(s.path("bad.json"), "").empty());
  CHECK(complete_path("-", "").empty());
}

TEST_CASE("complete_path: after [], the names of every item, each once", "[complete]") {
  loopkit::testing::Scratch s;
  s.write("s.json", R"({"stages":[{"name":"a","status":"x"},{"name":"b","note":"y\nz"},3],"m":[[1],[1,2]]})");
  const std::string f = s.path("s.json");
  CHECK(complete_path(f, ".stages[].") == Paths{".stages[].name", ".stages[].status", ".stages[].note"});
  CHECK(complete_path(f, ".stages[].n") == Paths{".stages[].name", ".stages[].note"});
  CHECK(complete_path(f, ".m[][") == Paths{".m[][0]", ".m[][1]"});
}

TEST_CASE("complete_path: an assignment's value is a JSON literal after :=, else nothing", "[complete]") {
  loopkit::testing::Scratch s;
  s.write("s.json", R"({"status":"run","done":false,"n":1})");
  const std::string f = s.path("s.json");
  // a person types the TEXT of status=...; member names are no value
  CHECK(complete_path(f, "status=").empty());
  CHECK(complete_path(f, "status=r").empty());
  CHECK(complete_path(f, "n+=").empty());
  CHECK(complete_path(f, "obj*=").empty());
  CHECK(complete_path(f, "done:=") == Paths{"done:=true", "done:=false", "done:=null"});
  CHECK(complete_path(f, "done:=f") == Paths{"done:=false"});
  CHECK(complete_path(f, "h[]:=n") == Paths{"h[]:=null"});
  CHECK(complete_path(f, "created?:=") == Paths{"created?:=true", "created?:=false", "created?:=null"});
  CHECK(complete_path(f, "done:=x").empty());
  // an '=' inside a quoted name is part of the name
  s.write("q.json", R"({"a=b":1})");
  CHECK(complete_path(s.path("q.json"), "[\"a=") == Paths{R"(["a=b"])"});
  // the value needs no file
  CHECK(complete_path(s.path("missing.json"), "x:=t") == Paths{"x:=true"});
}

TEST_CASE("issue 39: a name holding jq's operators is offered quoted: .bd-001 would be .bd - 1", "[complete]") {
  loopkit::testing::Scratch s;
  s.write("s.json", R"({"history":{"bd-001":1,"a<b":2,"ok_1":3}})");
  CHECK(complete_path(s.path("s.json"), ".history.") ==
        Paths{R"(.history.["bd-001"])", R"(.history.["a<b"])", ".history.ok_1"});
}
