// lib/core/ctx: defaults, phases, tokens, save names.
#include <catch2/catch.hpp>
#include <set>

#include "core/ctx/ctx.hpp"
#include "sys/base/shellwords.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;

static const std::string now = "2025-01-10T10:05:30Z";

static std::string at(const json::value& v, std::initializer_list<const char*> keys) {
  const json::value* p = &v;
  for (auto k : keys) p = &p->as_object().at(k);
  return json::compact(*p);
}

TEST_CASE("a fresh save is complete: filling it changes nothing") {
  json::value doc = ctx::fresh_save(now);
  json::value copy = doc;
  CHECK(ctx::fill_defaults(copy, now).empty());
  CHECK(copy == doc);
  CHECK(at(doc, {"phases", "status"}).find("in_progress") == std::string::npos);
}

TEST_CASE("filling reports each missing or mistyped field once") {
  json::value doc =
      json::parse(R"({"version":"1.0","phases":{"current":"TEST"},"context":[],"metadata":{"save_count":"x"},
    "configuration":{"token_limit":64000}})",
                  "t");
  auto filled = ctx::fill_defaults(doc, now);
  std::vector<std::string> paths;
  for (auto& f : filled) paths.push_back(f.path + (f.missing ? "" : "!"));
  CHECK(paths == std::vector<std::string>{
                     "mode", "timestamp", "project", "phases.completed", "phases.status", "context!", "debates",
                     "errors", "quality_gates", "configuration.save_threshold", "configuration.output_dir",
                     "configuration.log_level", "configuration.fail_fast", "configuration.debate_enabled",
                     "metadata.created_at", "metadata.updated_at", "metadata.save_count!", "metadata.resume_count"});
  CHECK(at(doc, {"phases", "completed"}) == R"(["LOAD","DISCOVER","PLAN","ARCHITECT","IMPLEMENT"])");
  CHECK(at(doc, {"phases", "status", "TEST"}) == R"("in_progress")");
  CHECK(at(doc, {"context", "token_usage", "limit"}) == "64000");
}

TEST_CASE("versions: 1.x passes, others are bad data") {
  for (const char* ok : {R"({"version":"1.0"})", R"({"version":"1.7"})", R"({"version":"1"})", R"({"phases":{}})"})
    CHECK_NOTHROW(ctx::check_version(json::parse(ok, "t"), "t"));
  for (const char* bad : {R"({"version":"2.0"})", R"({"version":"10.1"})", R"({"version":true})"})
    CHECK_THROWS_AS(ctx::check_version(json::parse(bad, "t"), "t"), Error);
  CHECK_THROWS_AS(ctx::check_shape(json::parse("{}", "t"), "t"), Error);
  CHECK_THROWS_AS(ctx::check_shape(json::parse("[]", "t"), "t"), Error);
}

TEST_CASE("set_phase follows the document's own phase list") {
  json::value doc = json::parse(R"({"phases":{"status":{"a":"pending","b":"failed","c":"complete"}}})", "t");
  ctx::set_phase(doc, "B");
  CHECK(at(doc, {"phases"}) ==
        R"({"status":{"a":"complete","b":"in_progress","c":"pending"},"current":"b","completed":["a"]})");
  CHECK_THROWS_AS(ctx::set_phase(doc, "LOAD"), Error);
}

TEST_CASE("tokens and the ratio") {
  json::value doc = ctx::fresh_save(now);
  ctx::set_tokens(doc, "102400/128000");
  CHECK(at(doc, {"context", "token_usage"}) == R"({"total":102400,"limit":128000,"percentage":0.8})");
  CHECK(ctx::token_ratio(doc) == Approx(0.8));
  ctx::set_tokens(doc, "1");
  CHECK(at(doc, {"context", "token_usage", "percentage"}) == "0");
  CHECK(ctx::token_ratio(doc) > 0);
  CHECK_THROWS_AS(ctx::set_tokens(doc, "1/"), Error);
  CHECK_THROWS_AS(ctx::set_tokens(doc, "/5"), Error);
}

TEST_CASE("counts go up from whatever was there") {
  json::value doc = json::parse(R"({"metadata":{"save_count":4.0,"resume_count":"x"}})", "t");
  ctx::stamp_save(doc, now);
  ctx::count_resume(doc);
  CHECK(at(doc, {"metadata"}) ==
        R"({"save_count":5,"resume_count":1,"updated_at":"2025-01-10T10:05:30Z","created_at":"2025-01-10T10:05:30Z"})");
}

TEST_CASE("save names parse and print") {
  auto n = ctx::parse_save_name("mdan-save-1736503530-12.json.gz");
  REQUIRE(n);
  CHECK(n->epoch == 1736503530);
  CHECK(n->suffix == 12);
  CHECK(n->gz);
  CHECK(ctx::save_name(*n) == "mdan-save-1736503530-12.json.gz");
  CHECK(ctx::save_name({5, 1, false}) == "mdan-save-5.json");
  for (const char* bad : {"mdan-save-.json", "mdan-save-12-1.json", "mdan-save-12-x.json", "mdan-save-12.json.tmp",
                          ".mdan-save-12.json.tmp", "mdan-save-latest.json", "mdan-save-1.gz"})
    CHECK_FALSE(ctx::parse_save_name(bad));
}

TEST_CASE("shell quoting survives eval") {
  CHECK(shell_quote("saves/mdan-save-1.json") == "saves/mdan-save-1.json");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("it's $(x)") == R"('it'\''s $(x)')");
}

TEST_CASE("UTF-8 validation") {
  CHECK(ctx::is_utf8("plain ascii"));
  CHECK(ctx::is_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(ctx::is_utf8("\xff"));
  CHECK_FALSE(ctx::is_utf8("\xc3"));
  CHECK_FALSE(ctx::is_utf8("\xc0\xaf"));      // overlong
  CHECK_FALSE(ctx::is_utf8("\xed\xa0\x80"));  // surrogate
}

#include "sys/fs/beneath.hpp"

TEST_CASE("artifact file names must stay inside the folder") {
  for (const char* ok : {"a.md", "docs/plan.md", "./docs//plan.md", "a..b/c", "..a"}) CHECK(is_plain_relative(ok));
  for (const char* bad : {"", "/etc/passwd", "../x", "docs/../../x", "docs/..", "docs/", ".", "a/./..", "x/../y"})
    CHECK_FALSE(is_plain_relative(bad));
}

TEST_CASE("issue 22: whose a save is: project.name, else the folder it was made in") {
  json::value doc = ctx::fresh_save(now);
  CHECK_FALSE(ctx::project_of(doc).known());  // fresh: no name, no folder yet
  ctx::stamp_project(doc, "/w/a");
  const ctx::Project a = ctx::project_of(doc);
  CHECK(a.folder == "/w/a");
  CHECK(a.name.empty());
  CHECK(ctx::same_project(a, {"", "/w/a"}));
  CHECK_FALSE(ctx::same_project(a, {"", "/w/b"}));
  CHECK_FALSE(ctx::same_project(a, {"shop", "/w/a"}));  // a named save is another project's
  CHECK_FALSE(ctx::same_project(a, {"", ""}));          // one that says neither is nobody's
  const ctx::Project shop{"shop", "/w/a"};
  CHECK(ctx::same_project(shop, {"shop", "/w/b"}));
  CHECK_FALSE(ctx::same_project(shop, {"", "/w/a"}));
  CHECK(ctx::made_in(shop, "/w/a"));
  CHECK_FALSE(ctx::made_in(shop, "/w/b"));
  CHECK_FALSE(ctx::made_in({"", ""}, ""));
  // a project that is not an object stays the caller's
  json::value odd = json::parse(R"({"project":"mine"})", "t");
  ctx::stamp_project(odd, "/w/a");
  CHECK(json::compact(odd) == R"({"project":"mine"})");
  CHECK_FALSE(ctx::project_of(odd).known());
  CHECK(!ctx::working_folder().empty());
  CHECK(ctx::working_folder()[0] == '/');
}

// has_every_field is fill_defaults' shortcut: it must name the same fields.
// Each field of a fresh save, removed or given another kind, is one that
// fill_defaults fills, and that has_every_field misses.
static void field_paths(const json::value& v, std::vector<std::string>& at,
                        std::vector<std::vector<std::string>>& out) {
  static const std::set<std::string> inside = {"project",       "phases",  "context", "context.token_usage",
                                               "configuration", "metadata"};
  for (const auto& kv : v.as_object()) {
    at.emplace_back(kv.key());
    out.push_back(at);
    std::string joined;
    for (const auto& p : at) joined += (joined.empty() ? "" : ".") + p;
    if (inside.count(joined)) field_paths(kv.value(), at, out);
    at.pop_back();
  }
}

TEST_CASE("has_every_field agrees with fill_defaults on every field of a fresh save") {
  const json::value fresh = ctx::fresh_save(now);
  CHECK(ctx::has_every_field(fresh));
  std::vector<std::string> at;
  std::vector<std::vector<std::string>> paths;
  field_paths(fresh, at, paths);
  CHECK(paths.size() == 34);
  for (const auto& path : paths) {
    for (int how = 0; how < 2; ++how) {
      json::value doc = fresh;
      json::object* parent = &doc.as_object();
      for (std::size_t i = 0; i + 1 < path.size(); ++i) parent = &parent->at(path[i]).as_object();
      const bool was_string = parent->at(path.back()).is_string();
      if (how == 0) parent->erase(path.back());
      else (*parent)[path.back()] = was_string ? json::value(1) : json::value("x");
      INFO(path.back() << (how == 0 ? " removed" : " mistyped"));
      CHECK_FALSE(ctx::has_every_field(doc));
      CHECK_FALSE(ctx::fill_defaults(doc, now).empty());
      CHECK(ctx::has_every_field(doc));
    }
  }
}

TEST_CASE("save_text writes what json::to_text writes in the default layout") {
  json::value doc = ctx::fresh_save(now);
  CHECK(ctx::save_text(doc) == json::to_text(doc, json::default_layout()));
  doc = json::parse(R"({"a":"q\"b\\c\n\t\u0001\u007f é","b":[],"c":{},"d":[1,2.5,-0,1e300,true,null,{"x":[[]]}],)"
                    R"("e\"k":{"f":"","g":12345678901234567890123}})",
                    "t", {}, json::Literals::as_written);
  CHECK(ctx::save_text(doc) == json::to_text(doc, json::default_layout()));
  CHECK(ctx::save_text(json::value("s")) == "\"s\"\n");
}
