// lib/core/scan: one validating pass that keeps only the spans the paths need.
// Its verdicts and spans are checked against Boost.JSON (through
// validate_json and json::parse) and against a lookup on the parsed
// document (tests/unit/reference.hpp).
#include <catch2/catch.hpp>

#include <random>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"
#include "core/edit/textedit.hpp"
#include "reference.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

namespace {

// "ok", or the exit code and message of the failure
std::string verdict_of_scan(const std::string& text) {
  try {
    scan::Want w;
    scan::scan(text, w, "t.json");
    return "ok";
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
}

std::string verdict_of_boost(const std::string& text) {
  try {
    json::parse(text, "t.json");
    return "ok";
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
}

// what lookup finds at path in a scanned root, as text
std::vector<std::string> spans_at(const std::string& text, const scan::Node& root, const char* path) {
  std::vector<std::string> out;
  for (const auto& s : textedit::lookup(text, root, parse_path(path)))
    out.push_back(s ? text.substr(s->first, s->second - s->first) : "<missing>");
  return out;
}

std::vector<std::string> spans_by_scan(const std::string& text, const char* path) {
  scan::Want w;
  w.add(parse_path(path));
  w.settle();
  return spans_at(text, scan::scan(text, w, "t.json"), path);
}

// the values the reference lookup finds, as compact JSON
std::vector<std::string> values_by_reference(const std::string& text, const char* path) {
  json::value doc = json::parse(text, "t.json");
  std::vector<std::string> out;
  for (const json::value* v : reference::lookup(doc, parse_path(path)))
    out.push_back(v ? json::compact(*v) : "<missing>");
  return out;
}

std::vector<std::string> compact_all(const std::vector<std::string>& spans) {
  std::vector<std::string> out;
  for (const auto& s : spans) out.push_back(s == "<missing>" ? s : json::compact(json::parse(s, "v")));
  return out;
}

}  // namespace

TEST_CASE("scan accepts and refuses what json::parse does, with its messages") {
  const char* cases[] = {
      "{}",
      "[]",
      " {\"a\" : [1, 2.5e-3, -0, \"x\"], \"b\": {\"c\": null}} \n",
      "\"s\"",
      "0",
      "-0.0e+0",
      "true",
      "{\"a\":1,}",
      "[1,]",
      "[,1]",
      "{,}",
      "{\"a\" 1}",
      "{\"a\":}",
      "[01]",
      "[1.]",
      "[.5]",
      "[-]",
      "[1e]",
      "[1e+]",
      "[+1]",
      "[tru]",
      "[nul]",
      "[True]",
      "\"a\x01\"",
      "\"\\x\"",
      "\"\\u12\"",
      "\"\\u12G4\"",
      "[\"\\ud800\"]",
      "[\"\\udc00\"]",
      "[\"\\ud800\\u0041\"]",
      "[\"\\ud83d\\ude00\"]",
      "\"\xc3\xa9\"",
      "\"\xc3\"",
      "\"\xe2\x82\"",
      "\"\xc0\xaf\"",
      "\"\xed\xa0\x80\"",
      "\"\xf4\x90\x80\x80\"",
      "\"\xf0\x9f\x98\x80\"",
      "\"\xff\"",
      "",
      "   ",
      "{} {}",
      "[1] x",
      "{\"a\":1",
      "[1, 2",
      "\"abc",
      "[1 2]",
      "{\"a\":1 \"b\":2}",
      "[\"a\\\"b\"]",
      "nul",
      "{\"\\u00e9\": 1}",
      "[1e308, -1.7976931348623157e308, 1e-400, 0e999999]",
      // exponents past what Boost.JSON counts (fuzz finding reader-exponent-overflow-accepted)
      "0e184467447091844674709551615551615",
      "[0e2147483647]",
      "[0e2147483648]",
      "[1e-2147483648]",
      "[0e999999999]",
      "[1e-999999999]",
      "[1e-100000000]",
      "[0.000e00000000000000000000001]",
  };
  for (const char* c : cases) {
    INFO(c);
    CHECK(verdict_of_scan(c) == verdict_of_boost(c));
  }
}

TEST_CASE("scan refuses numbers out of double range, which a reader cannot hold") {
  for (const char* c : {"1e400", "[-1e400]", "{\"a\": 18e307}", "[0.5e310]", "[1797693134862315808e290]"}) {
    INFO(c);
    std::string v = verdict_of_scan(c);
    CHECK(v.find("3 't.json': not valid JSON: number out of range at line 1") == 0);
  }
  // just inside the range, underflow (reads as 0) and big integers pass
  CHECK(verdict_of_scan("[1.7976931348623157e308, 1e-400, 123456789012345678901234567890]") == "ok");
}

TEST_CASE("scan limits nesting to json::max_depth, as the parser does") {
  for (std::size_t d : {json::max_depth - 1, json::max_depth, json::max_depth + 1}) {
    std::string arrays = std::string(d, '[') + std::string(d, ']');
    CHECK(verdict_of_scan(arrays) == verdict_of_boost(arrays));
    std::string wrapped = "{\"a\":" + arrays + "}";
    CHECK(verdict_of_scan(wrapped) == verdict_of_boost(wrapped));
    // the same inside a wanted container, scanned by the other walker
    scan::Want w;
    w.add(parse_path(".a"));
    bool scan_ok = true, parse_ok = true;
    try {
      scan::scan(wrapped, w, "t");
    } catch (const Error&) {
      scan_ok = false;
    }
    try {
      json::parse(wrapped, "t");
    } catch (const Error&) {
      parse_ok = false;
    }
    CHECK(scan_ok == parse_ok);
  }
}

TEST_CASE("scan agrees with json::parse on mutated documents") {
  // every byte of a few documents replaced by characters that matter to
  // the grammar, at every position: the 16-byte steps see them all
  std::string base =
      "{\"name\": \"a long string value that crosses sixteen bytes \\\"q\\\" \\u00e9\xc3\xa9\", "
      "\"list\": [1, -2.5e3, true, false, null, {\"k\": []}],\n  \"deep\": {\"x\": [[{}]]}}";
  const char subst[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '\x01', '\x80', 'e', '-', '.', '0', ' ', 'u'};
  for (std::size_t i = 0; i < base.size(); ++i) {
    for (char c : subst) {
      std::string t = base;
      t[i] = c;
      INFO(i << " " << static_cast<int>(c));
      REQUIRE(verdict_of_scan(t) == verdict_of_boost(t));
    }
  }
}

TEST_CASE("strings around the 16-byte steps: escapes, UTF-8 and the end of the text") {
  for (int pad = 0; pad < 40; ++pad) {
    for (const char* tail : {"\\\\", "\\\"", "\xc3\xa9", "\xf0\x9f\x98\x80", "\\u00e9", "\xc3"}) {
      std::string t(1, '"');
      t.append(static_cast<std::size_t>(pad), 'x').append(tail).push_back('"');
      INFO(t);
      REQUIRE(verdict_of_scan(t) == verdict_of_boost(t));
      std::string in = "[" + t + ", 1]";
      REQUIRE(verdict_of_scan(in) == verdict_of_boost(in));
    }
    std::string spaces(1, '[');
    spaces.append(static_cast<std::size_t>(pad), ' ')
        .append("1")
        .append(static_cast<std::size_t>(pad), ' ')
        .push_back(']');
    REQUIRE(verdict_of_scan(spaces) == "ok");
  }
}

TEST_CASE("spans of wanted paths agree with the reference lookup") {
  std::string t = R"({ "h" : [ {"i": 1}, [2, [3]], "4", {"i": 1.0} ] , "n": null, "s": "x",
    "d": {"a": 1, "b": 2, "a": 3}, "e": {"q\"k": [true]}, "\u0061b": 7 })";
  for (const char* p : {".h[0].i", ".h[-1].i", ".h[1][1][0]", ".h[-3][-1]", ".h[9]", ".h[-9]", ".n.x", ".n[0]", ".d.a",
                        ".d[]", ".h[]", ".e[\"q\\\"k\"][0]", ".ab", ".missing", ".", ".h[].i"}) {
    INFO(p);
    std::vector<std::string> a, b;
    std::string ea, eb;
    try {
      a = spans_by_scan(t, p);
    } catch (const Error& e) {
      ea = e.what();
    }
    try {
      b = values_by_reference(t, p);
    } catch (const Error& e) {
      eb = e.what();
    }
    if (std::string(p) == ".d[]") {
      // a duplicated name once, at its first place, with its last value (as jq)
      CHECK(a == std::vector<std::string>{"3", "2"});
    }
    CHECK(ea == eb);
    CHECK(compact_all(a) == b);
  }
  CHECK_THROWS_WITH(spans_by_scan(t, ".s.x"), Catch::Contains("cannot look up"));
  CHECK_THROWS_WITH(spans_by_scan(t, ".s[0]"), Catch::Contains("cannot index a string"));
}

TEST_CASE("negative indices keep only a window of the last items") {
  std::string t = "[";
  for (int i = 0; i < 1000; ++i) t += (i ? ", " : "") + std::string("{\"i\": ") + std::to_string(i) + "}";
  t += "]";
  Path p = parse_path("[-3].i");
  scan::Want w;
  w.add(p);
  w.settle();
  scan::Node root = scan::scan(t, w, "t");
  CHECK(root.count == 1000);
  CHECK(root.children.size() == 1);  // one kept element, not a thousand
  auto s = textedit::lookup(t, root, p);
  REQUIRE(s[0]);
  CHECK(t.substr(s[0]->first, s[0]->second - s[0]->first) == "997");
  // the style items of the array are known without keeping the rest
  CHECK(t.substr(root.last.value, root.last.end - root.last.value) == "{\"i\": 999}");
  CHECK(t.substr(root.second.prefix, root.second.key - root.second.prefix) == ", ");
}

TEST_CASE("random documents: every path's spans agree with the reference lookup") {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::function<std::string(int)> gen = [&](int depth) -> std::string {
    int k = depth > 3 ? pick(4) : pick(7);
    switch (k) {
      case 0: return std::to_string(pick(100) - 50);
      case 1: return "\"s" + std::to_string(pick(10)) + "\"";
      case 2: return pick(2) ? "null" : "1.0";
      case 3: return "true";
      case 4:
      case 5: {
        std::string s = "{";
        int n = pick(4);
        for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::string("\"") + "abc"[pick(3)] + "\": " + gen(depth + 1);
        return s + "}";
      }
      default: {
        std::string s = "[";
        int n = pick(5);
        for (int i = 0; i < n; ++i) s += (i ? "," : "") + gen(depth + 1);
        return s + "]";
      }
    }
  };
  const char* segs[] = {".a", ".b", ".c", "[0]", "[1]", "[-1]", "[-2]", "[]"};
  for (int round = 0; round < 400; ++round) {
    std::string t = gen(0);
    for (int q = 0; q < 10; ++q) {
      std::string path;
      int n = 1 + pick(3);
      for (int i = 0; i < n; ++i) path += segs[pick(8)];
      INFO(t << "  " << path);
      std::vector<std::string> a;
      std::string ea = "-";
      try {
        a = spans_by_scan(t, path.c_str());
      } catch (const Error& e) {
        ea = e.what();
      }
      // the reference is lookup() on the parsed document: the same values
      // (a duplicated name once under [], with its last value) and errors
      std::string er = "-";
      std::vector<const json::value*> vals;
      json::value doc = json::parse(t, "t");
      try {
        vals = reference::lookup(doc, parse_path(path));
      } catch (const Error& e) {
        er = e.what();
      }
      REQUIRE(ea == er);
      REQUIRE(vals.size() == a.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        REQUIRE((a[i] == "<missing>") == !vals[i]);
        if (vals[i]) REQUIRE(json::parse(a[i], "v") == *vals[i]);
      }
    }
  }
}

TEST_CASE("the scan reports its progress every 16 MiB, in order, and only then") {
  std::string t = "[";
  std::string entry = "{\"k\": \"" + std::string(1000, 'x') + "\"}";
  while (t.size() < (std::size_t(40) << 20)) t += entry + ",\n";
  t += "0]";
  std::vector<std::size_t> seen;
  scan::Want w;
  w.add(parse_path("[-1]"));
  w.settle();
  scan::Node root = scan::scan(t, w, "t", [&](std::size_t done) { seen.push_back(done); });
  CHECK(seen == std::vector<std::size_t>{std::size_t(16) << 20, std::size_t(32) << 20});
  auto s = textedit::lookup(t, root, parse_path("[-1]"));
  REQUIRE(s[0]);
  CHECK(s[0]->first == t.size() - 2);
}

TEST_CASE("items taken walking and from the window of the last ones come out in order, each once") {
  // [8] and [1] are taken walking; [-5], [-1] and [-9] from the window; the
  // children of a container are in index order for lookup to find them
  std::string t = R"({"a":[0,1,2,3,4,5,6,7,8,9],"b":[[0,1],[2,3],[4,5]]})";
  const char* paths[] = {".a[8]",  ".a[-5]",   ".a[1]",      ".a[-1]",  ".a[-9]",
                         ".a[-2]", ".b[2][0]", ".b[-3][-1]", ".b[0][1]"};
  scan::Want w;
  for (const char* p : paths) w.add(parse_path(p));
  w.settle();
  scan::Node root = scan::scan(t, w, "t.json");
  const scan::Node* a = nullptr;
  for (const auto& c : root.children)
    if (t.compare(c.item.key, 3, "\"a\"") == 0) a = &c.node;
  REQUIRE(a);
  std::vector<std::size_t> order;
  for (const auto& c : a->children) order.push_back(c.index);
  CHECK(order == std::vector<std::size_t>{1, 5, 8, 9});  // 1 ([-9]) and 8 ([-2]) once
  for (const char* p : paths) {
    INFO(p);
    CHECK(spans_at(t, root, p) == values_by_reference(t, p));
  }
}

TEST_CASE("a big object's members are looked up through an index, with the last copy counting") {
  // 40 members (past the few looked at one by one), one name twice, one
  // spelled with an escape: the same answers as the reference lookup
  std::string t = "{";
  for (int i = 0; i < 40; ++i) t += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  t += R"("k7": "again", "\u006b39x": true, "q\"k": [1]})";
  for (const char* p : {".k0", ".k7", ".k39", ".k39x", ".q\\\"k", ".k40", ".k3"}) {
    INFO(p);
    CHECK(compact_all(spans_by_scan(t, p)) == values_by_reference(t, p));
  }
  scan::Want w;
  for (const char* p : {".k7", ".k39x", ".k1"}) w.add(parse_path(p));
  w.settle();
  scan::Node root = scan::scan(t, w, "t.json");
  REQUIRE(root.children.size() == 4);  // the picked ones: k1, k7 twice, k39x
  CHECK(scan::member(t, root, "k7") == &root.children[2]);
  // few picked children: looked at one by one, no index
  CHECK(!root.names);
  std::string many = "{";
  for (int i = 0; i < 40; ++i) many += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  many += ", \"k5\": \"last\"}";
  scan::Want all;
  for (int i = 0; i < 40; ++i) all.add(parse_path(".k" + std::to_string(i)));
  all.settle();
  scan::Node big = scan::scan(many, all, "t.json");
  const scan::Child* five = scan::member(many, big, "k5");
  REQUIRE(five);
  CHECK(many.substr(five->node.begin, five->node.end - five->node.begin) == "\"last\"");
  CHECK(big.names);  // built once, kept for the look-ups that follow
  CHECK(scan::member(many, big, "k39") == &big.children[39]);
  CHECK(!scan::member(many, big, "k40"));
}
