// lib/core/edit/textedit: edits applied to scanned text. The reference is
// reference::edit_value (reference.hpp) on a whole parsed document: the same result when the
// output is parsed, the same errors; and the bytes of what no edit touched.
#include <catch2/catch.hpp>

#include <random>

#include "core/edit/assign.hpp"
#include "core/json/json.hpp"
#include "core/scan/scan.hpp"
#include "core/edit/textedit.hpp"
#include "reference.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

namespace {

Edit edit_of(const std::string& arg) {
  if (arg.rfind("--delete ", 0) == 0) return delete_edit(arg.substr(9));
  return parse_assignment(arg);
}

std::vector<Edit> edits_of(const std::vector<std::string>& args) {
  std::vector<Edit> edits;
  for (const auto& a : args) edits.push_back(edit_of(a));
  return edits;
}

// the new text, or "error N: message"
std::string run(const std::string& text, const std::vector<std::string>& args) {
  try {
    textedit::StringSink out;
    if (!textedit::edit_text(text, edits_of(args), out, "t.json")) return text;
    return out.text;
  } catch (const Error& e) {
    return "error " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
  }
}

// the reference: the document parsed whole, the edits applied in order
std::string reference(const std::string& text, const std::vector<std::string>& args, json::value& result) {
  try {
    result = json::parse(text, "t.json", {}, json::Literals::as_written);
    for (const auto& e : edits_of(args)) reference::edit_value(result, e);
    return "";
  } catch (const Error& e) {
    return "error " + std::to_string(static_cast<int>(e.code())) + ": " + e.what();
  }
}

void check_against_reference(const std::string& text, const std::vector<std::string>& args) {
  json::value want;
  std::string err = reference(text, args, want);
  std::string got = run(text, args);
  std::string all;
  for (const auto& a : args) all += a + "  ";
  INFO("text: " << text << "\nedits: " << all << "\ngot: " << got);
  if (!err.empty()) {
    REQUIRE(got == err);
    return;
  }
  REQUIRE(got.rfind("error", 0) != 0);
  // numbers compared as readers see them (the reference keeps literals' text)
  REQUIRE(json::parse(got, "out") == json::parse(json::compact(want), "want"));
}

}  // namespace

TEST_CASE("edits apply in command-line order, each seeing the last one's result") {
  CHECK(run(R"({"a":[1,2,3]})", {"--delete a[0]", "a[0]+=10"}) == R"({"a":[12,3]})");
  CHECK(run(R"({"a":[1,2,3]})", {"a[]:=4", "a[-2]+=10"}) == R"({"a":[1,2,13,4]})");
  CHECK(run(R"({"h":[]})", {"h[]:={\"n\":1}", "h[-1].t:=2"}) == R"({"h":[{"n":1,"t":2}]})");
  CHECK(run(R"({})", {"a.b:=1", "a.b.c:=2"}) == "error 3: a.b.c: cannot set \"c\" in a number at '.a.b'");
  CHECK(run(R"({"a":[1,2,3]})", {"--delete a[0]", "--delete a[0]", "a[0]:=9"}) == R"({"a":[9]})");
  CHECK(run(R"({"a":[1,2,3]})", {"a[3]:=4", "a[-1]+=1"}) == R"({"a":[1,2,3,5]})");
}

TEST_CASE("a duplicated name: the last copy is read and changed, earlier ones keep their bytes") {
  CHECK(run(R"({"a": 1, "b": 2, "a": 3})", {"a+=1"}) == R"({"a": 1, "b": 2, "a": 4})");
  CHECK(run(R"({"a": 1.0, "a": {"x": 1}})", {"a.y:=2"}) == R"({"a": 1.0, "a": {"x": 1, "y": 2}})");
  // deleting the name deletes every copy: none reads back
  CHECK(run(R"({"a": 1, "b": 2, "a": 3})", {"--delete a"}) == R"({"b": 2})");
}

TEST_CASE("numbers keep their text; sums are exact or refused") {
  CHECK(run(R"({"a": 1.0, "b": 1e2})", {"c:=1e2"}) == R"({"a": 1.0, "b": 1e2, "c": 1e2})");
  CHECK(run(R"({"a": 1.0})", {"b:=123456789012345678901234567890"}) ==
        R"({"a": 1.0, "b": 123456789012345678901234567890})");
  CHECK(run(R"({"a": 1.0})", {"a:=1.0"}) == R"({"a": 1.0})");  // the same value: untouched
  CHECK(run(R"({"a": 1.0})", {"a+=0"}) == R"({"a": 1.0})");
  CHECK(run(R"({"n": 9223372036854775807})", {"n+=1"}) == R"({"n": 9223372036854775808})");
  CHECK_THAT(run(R"({"n": 1.5e308})", {"n+=1.5e308"}), Catch::StartsWith("error 3: n: the sum"));
  CHECK(run(R"({"v": [1e-400]})", {"w+=1"}) == R"({"v": [1e-400], "w": 1})");
  CHECK(run(R"({"v": "x"})", {"v+=1"}) == "error 3: v: cannot add to a string");
}

TEST_CASE("new members and elements take their neighbours' style") {
  std::string pretty = "{\n  \"a\": 1,\n  \"h\": [\n    {\"i\": 1}\n  ]\n}\n";
  CHECK(run(pretty, {"b:=[1,2]"}) ==
        "{\n  \"a\": 1,\n  \"h\": [\n    {\"i\": 1}\n  ],\n  \"b\": [\n    1,\n    2\n  ]\n}\n");
  CHECK(run(pretty, {"h[]:={\"i\":2}"}) ==
        "{\n  \"a\": 1,\n  \"h\": [\n    {\"i\": 1},\n    {\n      \"i\": 2\n    }\n  ]\n}\n");
  CHECK(run(R"({"a":1, "b":2})", {"c:={\"x\" : [1, {}]}"}) == R"({"a":1, "b":2, "c":{"x":[1, {}]}})");
  CHECK(run("{ }", {"a:=1"}) == "{\n  \"a\": 1\n}");
}

TEST_CASE("the output is the old text where nothing changed, byte for byte") {
  std::string t = "{\"x\":  [1.0, 2.50, \"\\u00e9\"],\n\t\"y\" : {\"z\": 1E2}, \"w\": 3}";
  CHECK(run(t, {"w:=4"}) == "{\"x\":  [1.0, 2.50, \"\\u00e9\"],\n\t\"y\" : {\"z\": 1E2}, \"w\": 4}");
  CHECK(run(t, {"--delete x"}) == "{\"y\" : {\"z\": 1E2}, \"w\": 3}");
  CHECK(run(t, {"--delete y"}) == "{\"x\":  [1.0, 2.50, \"\\u00e9\"], \"w\": 3}");
  CHECK(run(t, {"--delete w"}) == "{\"x\":  [1.0, 2.50, \"\\u00e9\"],\n\t\"y\" : {\"z\": 1E2}}");
  CHECK(run(t, {"--delete x[1]"}) == "{\"x\":  [1.0, \"\\u00e9\"],\n\t\"y\" : {\"z\": 1E2}, \"w\": 3}");
  CHECK(run(t, {"--delete x[0]"}) == "{\"x\":  [2.50, \"\\u00e9\"],\n\t\"y\" : {\"z\": 1E2}, \"w\": 3}");
  CHECK(run(t, {"w:=3"}) == t);  // nothing changed: nothing written
  // one item shows no comma: it is taken to space like the document's colons
  CHECK(run(" [1] \n", {"[]:=2"}) == " [1, 2] \n");
}

TEST_CASE("errors are those of reference::edit_value and parse_assignment()") {
  CHECK(run(R"({"a":[1]})", {"a[5]:=1"}) == "error 3: a[5]: index 5 is out of range for an array of 1");
  CHECK(run(R"({"a":"s"})", {"a[0]:=1"}) == "error 3: a[0]: cannot index a string at '.a'");
  CHECK(run(R"({"a":"s"})", {"a[]:=1"}) == "error 3: a[]: cannot append to a string");
  CHECK(run(R"({"a":"s"})", {"--delete a.b"}) == "error 3: a.b: cannot delete a member of a string");
  std::string deep = std::string(json::max_depth, '[') + std::string(json::max_depth, ']');
  CHECK_THAT(run("{}", {"a:=" + deep}), Catch::StartsWith("error 2: malformed assignment"));
}

TEST_CASE("many edits on a big array cost one scan") {
  std::string t = "{\"h\": [";
  for (int i = 0; i < 20000; ++i) t += (i ? ", " : "") + std::string("{\"i\": ") + std::to_string(i) + "}";
  t += "]}";
  std::vector<std::string> args;
  for (int i = 0; i < 20000; i += 2) args.push_back("h[" + std::to_string(i) + "].i+=1");
  args.push_back("h[]:={\"i\": -1}");
  args.push_back("--delete h[0]");
  args.push_back("h[-1].j:=true");
  check_against_reference(t, args);
}

TEST_CASE(
    "random documents and edits agree with reference::edit_value on a parsed document (issue 22: names \"\", issue 23: "
    "decimals)") {
  std::mt19937 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::function<std::string(int, const std::string&)> gen = [&](int depth, const std::string& ind) -> std::string {
    int k = depth > 2 ? pick(4) : pick(8);
    bool pretty = pick(2);
    std::string in = ind + "  ";
    switch (k) {
      case 0: return std::to_string(pick(100) - 50);
      case 1: return "\"s" + std::to_string(pick(10)) + "\"";
      case 2: return pick(2) ? "null" : pick(2) ? "1.0" : "2.08";
      case 3: return pick(2) ? "true" : "1e2";
      case 4:
      case 5: {
        int n = pick(4);
        if (n == 0) return "{}";
        std::string s = "{";
        for (int i = 0; i < n; ++i) {
          s += i ? "," : "";
          s += pretty ? "\n" + in : (i ? " " : "");
          // "" among the names: the member a run of skipped members must never pass for
          s += std::string("\"") + std::string("abcd").substr(static_cast<std::size_t>(pick(5)), 1) +
               "\": " + gen(depth + 1, in);
        }
        return s + (pretty ? "\n" + ind : "") + "}";
      }
      default: {
        int n = pick(5);
        if (n == 0) return "[]";
        std::string s = "[";
        for (int i = 0; i < n; ++i) {
          s += i ? "," : "";
          s += pretty ? "\n" + in : "";
          s += gen(depth + 1, in);
        }
        return s + (pretty ? "\n" + ind : "") + "]";
      }
    }
  };
  const char* segs[] = {"a", "b", "c", "e", "[0]", "[1]", "[-1]", "[-2]", "[3]", "[\"\"]"};
  const char* ops[] = {":=1",     ":=\"v\"",       ":={\"k\":[1,{}]}",
                       ":=[1,2]", ":=null",        "+=2",
                       "+=0.5",   "+=0.1",         "+=-0.30",
                       "[]:=7",   "[]:={\"z\":1}", "?:=5",
                       "=text",   "--delete",      "*={\"a\":{\"b\":2},\"c\":[1]}",
                       "*={}",    "*={\"e\":null}"};
  for (int round = 0; round < 3000; ++round) {
    std::string t = gen(0, "");
    if (t[0] != '{' && t[0] != '[') t = "{\"a\": " + t + "}";
    std::vector<std::string> args;
    int n = 1 + pick(5);
    for (int i = 0; i < n; ++i) {
      std::string path;
      int len = 1 + pick(3);
      for (int j = 0; j < len; ++j) {
        std::string s = segs[pick(10)];
        if (s[0] != '[' && !path.empty()) path += ".";
        path += s;
      }
      std::string op = ops[pick(17)];
      args.push_back(op == "--delete" ? "--delete " + path : path + op);
    }
    check_against_reference(t, args);
  }
}

TEST_CASE("--expect and --require values come from the same scan") {
  std::string t = R"({"v": 1, "a": [{"x": "y"}, 2], "n": null, "d": 1, "d": {"e": 1.0}})";
  std::vector<Path> paths;
  for (const char* p : {".v", ".a[0].x", ".a[-1]", ".n.q", ".v.q", ".missing", ".d.e", ".a[5]"})
    paths.push_back(parse_path(p));
  scan::Node root = scan::scan(t, textedit::wants_for({}, paths), "t");
  json::value doc = json::parse(t, "t");
  for (const Path& p : paths) {
    INFO(p.text);
    CHECK(textedit::value_in(t, root, p) == *reference::value_at(doc, p));
  }
}

TEST_CASE("FdSink writes every piece in order through its buffer") {
  FILE* f = std::tmpfile();
  REQUIRE(f);
  textedit::FdSink sink(fileno(f), "tmp");
  std::string want;
  for (int i = 0; i < 2000; ++i) {
    std::string piece(static_cast<std::size_t>(i * 37 % 5000), static_cast<char>('a' + i % 26));
    if (i % 500 == 0) piece.assign(200000, 'z');  // past the buffer: straight through
    sink.write(piece);
    want += piece;
  }
  sink.flush();
  CHECK(sink.bytes_written() == want.size());
  std::string got(want.size(), '\0');
  std::rewind(f);
  CHECK(std::fread(got.data(), 1, got.size(), f) == want.size());
  CHECK(got == want);
  std::fclose(f);
}

TEST_CASE("an edit that needs what the scan did not keep says so, and a wider scan serves it") {
  std::string t = R"({"a": [1, 2, 3], "b": {"c": 1}})";
  Edit e = parse_assignment("a[1]:=5");
  scan::Want narrow;  // nothing wanted: nothing entered
  scan::Node root = scan::scan(t, narrow, "t");
  textedit::Plan plan(t, root, json::detect_layout(t), "t");
  CHECK_THROWS_AS(plan.edit_spans(e), textedit::Plan::NeedsEveryItem);
  scan::Node wide = scan::scan(t, textedit::wants_for({e}, {}, true), "t");
  CHECK(wide.children.size() == 1);
  CHECK(wide.children[0].node.children.size() == 3);  // every item of a kept
  textedit::Plan again(t, wide, json::detect_layout(t), "t");
  again.edit_spans(e);
  textedit::StringSink out;
  again.write(out);
  CHECK(out.text == R"({"a": [1, 5, 3], "b": {"c": 1}})");
}

TEST_CASE("issue 22: the member named \"\" is deleted alone, never the members the scan skipped") {
  CHECK(run(R"({"a":1,"":2})", {"--delete [\"\"]"}) == R"({"a":1})");
  CHECK(run(R"({"a":1,"":2,"b":{"":3,"c":4}})", {"--delete b[\"\"]", "--delete .\"\""}) == R"({"a":1,"b":{"c":4}})");
  CHECK(run(R"({"a":1,"b":2})", {"--delete [\"\"]"}) == R"({"a":1,"b":2})");
  // deleted, then set again: it comes back alone, in its place
  CHECK(run(R"({"a":1,"":2,"b":3})", {"--delete [\"\"]", "[\"\"]:=5"}) == R"({"a":1,"":5,"b":3})");
  check_against_reference(R"({"a":1,"":2,"h":{"x":{"y":1},"":[1]}})", {"--delete h[\"\"]", "h.x.y+=1"});
}

TEST_CASE("issue 23: += on the overlay adds decimals exactly, as the reference does") {
  CHECK(run(R"({"f": 0.1})", {"f+=0.2"}) == R"({"f": 0.3})");
  CHECK(run(R"({"f": 2.08})", {"f+=0.1", "f+=-0.18"}) == R"({"f": 2})");
  CHECK(run(R"({"f": null})", {"f+=0.25"}) == R"({"f": 0.25})");
  check_against_reference(R"({"f": [0.1, 1e-7, 1.5e300]})", {"f[0]+=0.2", "f[1]+=1e-7", "f[2]+=1e300"});
}
