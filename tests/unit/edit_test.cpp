// lib/core/edit: only the changed spans of a document's text change.
#include <catch2/catch.hpp>

#include "core/assign.hpp"
#include "core/edit.hpp"
#include "core/jsontext.hpp"

using namespace loopkit;

static std::string edited(const std::string& text, std::initializer_list<const char*> assignments) {
  json::value before = json::parse(text, "x");
  json::value after = before;
  for (const char* a : assignments) {
    std::string s(a);
    if (s.rfind("-", 0) == 0) apply(after, delete_edit(s.substr(1)));
    else apply(after, parse_assignment(s));
  }
  return rewrite_faithfully(text, before, after, json::detect_layout(text));
}

TEST_CASE("unchanged numbers keep their spelling") {
  std::string t = "{\n  \"a\": 1.0,\n  \"b\": 2.50,\n  \"big\": 123456789012345678901234,\n  \"c\": 1\n}\n";
  CHECK(edited(t, {"c:=2"}) ==
        "{\n  \"a\": 1.0,\n  \"b\": 2.50,\n  \"big\": 123456789012345678901234,\n  \"c\": 2\n}\n");
}

TEST_CASE("new members follow their siblings' indentation") {
  CHECK(edited("{\n    \"a\": 1\n}\n", {"b=x"}) == "{\n    \"a\": 1,\n    \"b\": \"x\"\n}\n");
  CHECK(edited("{\n\t\"a\": {\n\t\t\"x\": 1\n\t}\n}", {"a.y:=[1]"}) ==
        "{\n\t\"a\": {\n\t\t\"x\": 1,\n\t\t\"y\": [\n\t\t\t1\n\t\t]\n\t}\n}");
}

TEST_CASE("compact and python-style documents stay on one line") {
  CHECK(edited("{\"a\":1,\"b\":2}", {"a:=3", "c:={\"d\":1}"}) == "{\"a\":3,\"b\":2,\"c\":{\"d\":1}}");
  CHECK(edited("{\"a\": 1, \"b\": 2}\n", {"c:=3"}) == "{\"a\": 1, \"b\": 2, \"c\": 3}\n");
}

TEST_CASE("deleting the first, a middle or the last member") {
  std::string t = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n";
  CHECK(edited(t, {"-a"}) == "{\n  \"b\": 2,\n  \"c\": 3\n}\n");
  CHECK(edited(t, {"-b"}) == "{\n  \"a\": 1,\n  \"c\": 3\n}\n");
  CHECK(edited(t, {"-c"}) == "{\n  \"a\": 1,\n  \"b\": 2\n}\n");
  CHECK(edited(t, {"-a", "-b", "-c"}) == "{}\n");
}

TEST_CASE("arrays: append, delete inside, fill an empty one") {
  std::string t = "{\n  \"h\": [\n    {\"i\": 1.0},\n    {\"i\": 2}\n  ],\n  \"e\": []\n}\n";
  CHECK(edited(t, {"h[]:=3"}) == "{\n  \"h\": [\n    {\"i\": 1.0},\n    {\"i\": 2},\n    3\n  ],\n  \"e\": []\n}\n");
  CHECK(edited(t, {"-h[1]"}) == "{\n  \"h\": [\n    {\"i\": 1.0}\n  ],\n  \"e\": []\n}\n");
  CHECK(edited(t, {"-h[0]"}) == "{\n  \"h\": [\n    {\"i\": 2}\n  ],\n  \"e\": []\n}\n");
  CHECK(edited(t, {"e[]=x"}) == "{\n  \"h\": [\n    {\"i\": 1.0},\n    {\"i\": 2}\n  ],\n  \"e\": [\n    \"x\"\n  ]\n}\n");
  CHECK(edited(t, {"h[1].j:=true"}) ==
        "{\n  \"h\": [\n    {\"i\": 1.0},\n    {\"i\": 2, \"j\": true}\n  ],\n  \"e\": []\n}\n");
}

TEST_CASE("nothing changed: every byte kept, odd whitespace included") {
  std::string t = "  {\"a\" :1 ,\n\"b\":[ 1,2 ] }  \n\n";
  CHECK(edited(t, {"a:=1"}) == t);
}

TEST_CASE("reformat redoes whitespace but keeps number spellings") {
  std::string t = "{\"a\":1.0,\"b\":[1,2]}";
  json::value v = json::parse(t, "x");
  CHECK(reformat(t, v, v, json::default_layout()) == "{\n  \"a\": 1.0,\n  \"b\": [\n    1,\n    2\n  ]\n}\n");
}

TEST_CASE("stand-ins are written back as the bytes they stand for") {
  std::string t = "{\n  \"big\": [1.0, 2.0],\n  \"n\": 1,\n  \"gone\": true,\n  \"tail\": 2.50\n}\n";
  json::value before = json::object();
  before.as_object()["big"] = stand_in(t.find('['));
  before.as_object()["n"] = 1;
  before.as_object()["gone"] = true;
  before.as_object()["tail"] = stand_in(t.find("2.50"));
  json::value after = before;
  apply(after, parse_assignment("n+=1"));
  apply(after, delete_edit("gone"));
  apply(after, parse_assignment("new.deep:=[]"));
  CHECK(rewrite_faithfully(t, before, after, json::detect_layout(t)) ==
        "{\n  \"big\": [1.0, 2.0],\n  \"n\": 2,\n  \"tail\": 2.50,\n  \"new\": {\n    \"deep\": []\n  }\n}\n");
  CHECK(rewrite_faithfully(t, before, before, json::detect_layout(t)) == t);
}

TEST_CASE("stand-ins survive deleting and appending in one array") {
  std::string t = "[{\"a\": 1.0}, {\"b\": 2.0}, 3.0]";
  json::value before = json::array{stand_in(1), stand_in(t.find("{\"b")), stand_in(t.find("3.0"))};
  json::value after = before;
  apply(after, delete_edit("[0]"));
  apply(after, parse_assignment("[]:=4"));
  CHECK(rewrite_faithfully(t, before, after, json::detect_layout(t)) == "[{\"b\": 2.0}, 3.0, 4]");
  CHECK_FALSE(is_stand_in(json::value("\u0000lk")));
}

// As state.cpp runs edits: the document is one stand-in for the text, opened
// by each edit on its way.
static std::string edited_lazily(const std::string& text, std::initializer_list<const char*> assignments) {
  JsonText jt(text);
  json::value before = stand_in(jt.root());
  json::value after = before;
  for (const char* a : assignments) {
    std::string s(a);
    if (s.rfind("-", 0) == 0) apply(after, delete_edit(s.substr(1)), jt);
    else apply(after, parse_assignment(s), jt);
  }
  return rewrite_faithfully(jt, before, after, json::detect_layout(text));
}

TEST_CASE("a duplicated name: the edit changes the last copy, the earlier ones keep their bytes") {
  for (auto edit : {&edited, &edited_lazily}) {
    CHECK(edit("{\"b\":[1],\"b\":{}}", {"b.d:=1"}) == "{\"b\":[1],\"b\":{\"d\":1}}");
    CHECK(edit("{\"b\":{},\"b\":[1]}", {"b[]:=2"}) == "{\"b\":{},\"b\":[1,2]}");
    CHECK(edit("{\"b\":{\"x\":1},\"b\":{\"y\":2}}", {"b.z:=3"}) == "{\"b\":{\"x\":1},\"b\":{\"y\":2,\"z\":3}}");
    CHECK(edit("{\"b\":1,\"a\":2,\"b\":3}", {"-b"}) == "{\"a\":2}");
    CHECK(edit("{\"b\":1,\"a\":2,\"b\":3}", {"a:=5"}) == "{\"b\":1,\"a\":5,\"b\":3}");
    // the same name spelled with an escape is the same name
    CHECK(edit("{\"b\":1,\"\\u0062\":2}", {"b+=1"}) == "{\"b\":1,\"\\u0062\":3}");
  }
}

TEST_CASE("edits opened lazily see the results of the edits before them") {
  CHECK(edited_lazily("{\"a\":[1,2,3]}", {"-a[0]", "a[0]+=10"}) == "{\"a\":[12,3]}");
  CHECK(edited_lazily("{\"a\":[1,2,3]}", {"a[]:=4", "a[-2]+=10"}) == "{\"a\":[1,2,13,4]}");
  CHECK(edited_lazily("{\"a\": [1.0, 2.0, 3.0], \"b\": 1.50}", {"a[1]=x", "c?:=1", "b?:=2"}) ==
        "{\"a\": [1.0, \"x\", 3.0], \"b\": 1.50, \"c\": 1}");
  CHECK(edited_lazily("{\"n\":null}", {"n?:=1e2"}) == "{\"n\":1e2}");
  CHECK(edited_lazily("{\"a\":0e400}", {"a+=1"}) == "{\"a\":1}");
  CHECK(edited_lazily("[1]", {"[0]:=123456789012345678901234567890"}) == "[123456789012345678901234567890]");
}

TEST_CASE("opening a stand-in gives one level: a shell of stand-ins, or a scalar with its literal") {
  std::string t = "{\"a\":{\"x\":[1]},\"a\":{\"y\":2},\"n\":1.0}";
  JsonText jt(t);
  json::value root = open_stand_in(jt, stand_in(jt.root()));
  REQUIRE(root.is_object());
  CHECK(root.as_object().size() == 2);
  CHECK(is_stand_in(root.at("a")));
  CHECK(t.substr(stand_in_offset(root.at("a")), 7) == "{\"y\":2}");
  json::value n = open_stand_in(jt, root.at("n"));
  CHECK(json::compact(n) == "1.0");
}

// tests/fuzz/findings/edit-comma-first-append: the new member took the last
// line's "  ," as its indentation and wrote a second comma
TEST_CASE("edit-comma-first-append: a comma-first layout gets new items comma-first, and stays valid JSON") {
  std::string t = "\n{\n  \"a\":1\n  ,\"b\":2\n}\n";
  std::string out = edited(t, {"c:=3"});
  CHECK(out == "\n{\n  \"a\":1\n  ,\"b\":2\n  ,\"c\":3\n}\n");
  out = edited(t, {"b:={\"x\":[1]}", "d:=4"});
  CHECK(out == "\n{\n  \"a\":1\n  ,\"b\":{\n    \"x\":[\n      1\n    ]\n  }\n  ,\"d\":4\n}\n");
  CHECK_NOTHROW(json::parse(out, "x"));
  CHECK(edited("[1\n, 2\n, 3]", {"[]:=4"}) == "[1\n, 2\n, 3\n, 4]");
}
