// lib/core/log/progress: layout, pattern insertion and the backward selection.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/log/progress.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "scratch.hpp"
#include "sys/base/format.hpp"

using namespace loopkit;
using namespace loopkit::progress;

namespace {

const std::string kSeed =
    "# Progress: myfeature\n\nVerify: npm test && npm run build\n\n## Codebase Patterns\n"
    "(Patterns discovered during implementation)\n\n---\n\n"
    "## 2025-01-10 - beads-123\n- Implemented user authentication\n"
    "- Files: src/auth/login.ts, src/auth/middleware.ts\n"
    "- Learning: Token refresh needs to handle concurrent requests\n\n---\n\n"
    "## 2025-01-10 - beads-124\n- Added password reset flow\n"
    "- Files: src/auth/reset.ts, src/email/templates/reset.html\n"
    "- Learning: Email templates should be tested with real SMTP\n\n---\n";

std::string shown(std::string_view doc, const ShowOptions& o, bool* found = nullptr) {
  std::string out;
  bool f = show_text(doc, o, [&](std::string_view s) { out += s; });
  if (found) *found = f;
  return out;
}

// the seed's awk '/^---$/{found=1; next} found', written out
std::string awk_learnings(std::string_view doc) {
  std::string out;
  bool found = false;
  size_t at = 0;
  while (at < doc.size()) {
    size_t nl = doc.find('\n', at);
    std::string_view line = doc.substr(at, nl == std::string_view::npos ? std::string_view::npos : nl - at);
    if (line == "---") {
      found = true;
    } else if (found) {
      out += std::string(line) + "\n";
    }
    if (nl == std::string_view::npos) break;
    at = nl + 1;
  }
  return out;
}

// a log of n entries, entry i with a body of about size_of(i) bytes
std::string big_log(int n, size_t (*size_of)(int)) {
  std::string doc = header_text("big", "");
  for (int i = 1; i <= n; ++i) {
    Entry e;
    e.date = loopkit::format("2025-01-{:02}", i % 28 + 1);
    e.id = loopkit::format("e{}", i);  // not "e" + ...: GCC 12 warns falsely (-Wrestrict, PR 105329)
    e.bullets.push_back("- ");
    e.bullets.back().append(size_of(i), static_cast<char>('a' + i % 26));
    doc += entry_text(e);
  }
  return doc;
}

template <class F>
void for_each_line_test(std::string_view text, F f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(text.substr(0, nl), nl != std::string_view::npos);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

std::string id_line(int i) {
  std::string s = " - e";
  s += std::to_string(i);
  return s + "\n";
}

}  // namespace

TEST_CASE("progress header is the seed's layout", "[progress]") {
  CHECK(header_text("myfeature", "npm test && npm run build") == kSeed.substr(0, kSeed.find("---\n") + 4));
  CHECK(header_text("s", "").find("Verify: (none)\n") != std::string::npos);
  CHECK(header_text("a\nb", "x\ny").find("# Progress: a b\n\nVerify: x y\n") == 0);
}

TEST_CASE("progress session name comes from the file name", "[progress]") {
  CHECK(session_from_path("progress-myfeature.md") == "myfeature");
  CHECK(session_from_path(".claude/pipeline-runs/auth/progress-auth.md") == "auth");
  CHECK(session_from_path("stage-1-plan/progress.md") == "progress");
  CHECK(session_from_path("notes.md") == "notes");
  CHECK(session_from_path("progress-myfeature.md.gz") == "myfeature");  // issue 39: .gz is how it is kept
  CHECK(session_from_path("notes.txt") == "notes.txt");
  CHECK(session_from_path("progress-.md") == "progress-");
}

TEST_CASE("progress dates are real days", "[progress]") {
  CHECK(is_date("2025-01-10"));
  CHECK(is_date("2024-02-29"));
  CHECK_FALSE(is_date("2025-02-29"));
  CHECK_FALSE(is_date("2025-13-01"));
  CHECK_FALSE(is_date("2025-1-10"));
  CHECK_FALSE(is_date("2025-01-10x"));
  CHECK_FALSE(is_date(""));
}

TEST_CASE("progress bullets: one per non-blank line, '- ' kept", "[progress]") {
  CHECK(bullets_from("line one\n- line two\n\n  \nthree\r\n") ==
        std::vector<std::string>{"- line one", "- line two", "- three"});
  CHECK(bullets_from("").empty());
  CHECK(bullets_from("-x") == std::vector<std::string>{"- -x"});
}

TEST_CASE("progress entry text and what goes after a file's tail", "[progress]") {
  Entry e{"2025-01-10", "beads-123", {"- a", "- b"}};
  CHECK(entry_text(e) == "\n## 2025-01-10 - beads-123\n- a\n- b\n\n---\n");
  CHECK(entry_text(Entry{"2025-01-10", "", {}}) == "\n## 2025-01-10\n\n---\n");
  CHECK(entry_after("- x\n\n---\n", e) == entry_text(e));
  CHECK(entry_after("---\n\n", e, true) == entry_text(e).substr(1));  // the seed's own init file ends with a blank line
  CHECK(entry_after("\n---", e) == "\n" + entry_text(e));             // a hand edit without a final newline
}

// issue 22: progress-append killed mid-entry left a torn entry that swallowed
// every later one (progress-show --id next found nothing)
TEST_CASE("a torn last entry is closed before the next one", "[progress]") {
  Entry e{"2025-01-11", "next", {"- n"}};
  CHECK(closing_after("\n## 2025-01-10 - half\n- to", false) == "\n\n---\n");
  CHECK(closing_after("\n## 2025-01-10 - half\n", false) == "\n---\n");
  CHECK(closing_after("- a\n\n---\n", false) == "");
  CHECK(closing_after("- a\n---\n\n \n", false) == "");  // blank lines after the rule
  CHECK(closing_after("---\n", true) == "");             // a file that is only a rule
  CHECK(closing_after("---\n", false) == "\n---\n");     // "x---": the line may start before the tail
  CHECK(closing_after("- a\n---x\n", false) == "\n---\n");
  CHECK(entry_after("\n## 2025-01-10 - half\n- to", e) == "\n\n---\n" + entry_text(e));
  // the document then reads as two entries, the next one findable by its id
  std::string doc = "# P\n\n---\n\n## 2025-01-10 - half\n- to";
  doc += entry_after(doc, e, true);
  std::string out;
  ShowOptions o;
  o.id = "next";
  CHECK(show_text(doc, o, [&](std::string_view t) { out += t; }));
  CHECK(out == "# P\n\n---\n\n## 2025-01-11 - next\n- n\n\n---\n");
}

TEST_CASE("progress patterns go at the end of Codebase Patterns", "[progress]") {
  std::string doc = add_patterns(kSeed, {"Wrap handlers in withAuth()", "two\nlines"});
  CHECK(doc.find("(Patterns discovered during implementation)\n- Wrap handlers in withAuth()\n- two lines\n\n---\n\n## "
                 "2025-01-10 - beads-123") != std::string::npos);
  CHECK(doc.substr(doc.find("## 2025-01-10")) == kSeed.substr(kSeed.find("## 2025-01-10")));
  // a second one goes after the first
  std::string again = add_patterns(doc, {"- third"});  // a bullet already is kept
  CHECK(again.find("- two lines\n- third\n\n---\n") != std::string::npos);
  // another section after the patterns is left alone
  std::string two = "# P\n\n## Codebase Patterns\n- a\n\n## Notes\nn\n\n---\n";
  CHECK(add_patterns(two, {"b"}) == "# P\n\n## Codebase Patterns\n- a\n- b\n\n## Notes\nn\n\n---\n");
  // no section: made before the first rule
  CHECK(add_patterns("# P\n\n---\n\n## 2025-01-01\n\n---\n", {"p"}) ==
        "# P\n\n## Codebase Patterns\n- p\n\n---\n\n## 2025-01-01\n\n---\n");
  CHECK(add_patterns("", {"p"}) == "## Codebase Patterns\n- p\n\n---\n");
  // a "## Codebase Patterns" heading below the first rule is an entry's text, not the section
  CHECK(add_patterns("# P\n---\n## Codebase Patterns\n", {"p"}) ==
        "# P\n## Codebase Patterns\n- p\n\n---\n## Codebase Patterns\n");
}

TEST_CASE("progress headings give date and id", "[progress]") {
  auto h = heading_of("\n## 2025-01-10 - beads-123\n- x\n\n---\n");
  REQUIRE(h);
  CHECK(h->date == "2025-01-10");
  CHECK(h->id == "beads-123");
  h = heading_of("\n## 2025-01-10\n");
  REQUIRE(h);
  CHECK(h->id.empty());
  h = heading_of("## Iteration 3 - x\n");
  REQUIRE(h);
  CHECK(h->date.empty());
  CHECK_FALSE(heading_of("\nsome text\n## 2025-01-10 - x\n"));
  CHECK_FALSE(heading_of("\n\n"));
}

TEST_CASE("progress show with no option prints everything", "[progress]") {
  CHECK(shown(kSeed, {}) == kSeed);
  CHECK(shown("", {}) == "");
  CHECK(shown("no rule at all", {}) == "no rule at all");
}

TEST_CASE("progress show --learnings is the seed's awk", "[progress]") {
  ShowOptions o;
  o.learnings = true;
  for (std::string doc : {kSeed, kSeed + "\n", kSeed + "trailing", std::string("---"), std::string("a\n---\n---\nb"),
                          std::string("x\n--- \n---\n\n---\r\n---"), header_text("s", "") + "\n## 2025-01-01\n"})
    CHECK(shown(doc, o) == awk_learnings(doc));
}

TEST_CASE("progress show --last, --id, --since", "[progress]") {
  ShowOptions o;
  o.last = 1;
  std::string head = kSeed.substr(0, kSeed.find("---\n") + 4);
  std::string second = kSeed.substr(kSeed.rfind("\n## 2025"));
  CHECK(shown(kSeed, o) == head + second);
  o.last = 0;
  CHECK(shown(kSeed, o) == head);
  o.last = 5;
  CHECK(shown(kSeed, o) == kSeed);
  CHECK(shown(kSeed + "\n", o) == kSeed);  // a trailing blank line is no entry

  ShowOptions id;
  id.id = "beads-123";
  std::string first = kSeed.substr(head.size(), kSeed.size() - head.size() - second.size());
  CHECK(shown(kSeed, id) == head + first);
  bool found = true;
  id.id = "nope";
  CHECK(shown(kSeed, id, &found).empty());
  CHECK_FALSE(found);

  ShowOptions since;
  since.since = "2025-01-10";
  CHECK(shown(kSeed, since) == kSeed);
  since.since = "2025-01-11";
  CHECK(shown(kSeed, since, &found).empty());
  CHECK_FALSE(found);
}

TEST_CASE("progress show --max-bytes keeps the newest whole entries that fit", "[progress]") {
  std::string doc = big_log(300, [](int i) -> size_t { return static_cast<size_t>(i * 37 % 500); });
  std::string head = doc.substr(0, doc.find("---\n") + 4);
  for (size_t budget : {size_t(0), size_t(10), head.size(), head.size() + 50, size_t(1000), size_t(5000), size_t(20000),
                        doc.size(), doc.size() + 1}) {
    ShowOptions o;
    o.max_bytes = budget;
    std::string out = shown(doc, o);
    INFO("budget " << budget);
    CHECK(out.size() <= budget);
    if (budget >= head.size()) {
      CHECK(out.substr(0, head.size()) == head);
      // what follows the head is a suffix of the file, and the entry before it did not fit
      std::string rest = out.substr(head.size());
      CHECK(doc.substr(doc.size() - rest.size()) == rest);
      if (rest.size() < doc.size() - head.size()) {
        size_t start = doc.size() - rest.size();
        size_t prev = doc.rfind("\n---\n", start - 6);  // the rule before the one that ends at start
        size_t prev_start = prev == std::string::npos ? head.size() : prev + 5;
        CHECK(out.size() + (start - prev_start) > budget);
      }
    } else {
      CHECK(head.substr(0, out.size()) == out);  // whole lines of the head
      CHECK((out.empty() || out.back() == '\n'));
    }
  }
}

TEST_CASE("progress show reads entries across block boundaries", "[progress]") {
  // entries both far smaller and far larger than the 4 KiB read blocks
  std::string doc = big_log(60, [](int i) -> size_t { return i % 7 == 0 ? 9000 + static_cast<size_t>(i) : 3 * i; });
  for (int last : {1, 2, 7, 30, 60, 61}) {
    ShowOptions o;
    o.last = static_cast<size_t>(last);
    std::string out = shown(doc, o);
    int first = std::max(1, 60 - last + 1);
    INFO("last " << last);
    CHECK(out.find(id_line(first)) != std::string::npos);
    if (first > 1) CHECK(out.find(id_line(first - 1)) == std::string::npos);
    size_t head = doc.find("---\n") + 4;
    CHECK(out.substr(0, head) == doc.substr(0, head));
    CHECK(doc.substr(doc.size() - (out.size() - head)) == out.substr(head));
  }
  ShowOptions id;
  id.id = "e49";
  std::string out = shown(doc, id);
  CHECK(out.find(id_line(49)) != std::string::npos);
  CHECK(out.find(id_line(48)) == std::string::npos);
  CHECK(out.find(id_line(50)) == std::string::npos);
}

TEST_CASE("progress show on a file reads the same as in memory", "[progress]") {
  testing::Scratch scratch("progress-test");
  std::string path = scratch.path("progress-x.md");
  std::string doc = big_log(40, [](int i) -> size_t { return static_cast<size_t>(i * 311 % 6000); });
  AtomicWrite how;
  how.sync = false;
  write_file_atomic(path, doc, how);
  for (auto make :
       {+[](ShowOptions& o) { o.last = 3; }, +[](ShowOptions& o) { o.max_bytes = 9000; },
        +[](ShowOptions& o) { o.learnings = true; }, +[](ShowOptions& o) { o.id = "e7"; }, +[](ShowOptions&) {}}) {
    ShowOptions o;
    make(o);
    std::string from_file;
    show(path, o, [&](std::string_view s) { from_file += s; });
    CHECK(from_file == shown(doc, o));
  }
  CHECK(show(scratch.path("missing.md"), {}, [](std::string_view) {}) == Shown::no_file);
}

TEST_CASE("progress append creates the header once, then appends", "[progress]") {
  testing::Scratch scratch("progress-test");
  std::string path = scratch.path("progress-myfeature.md");
  AppendRequest r;
  r.verify = "npm test && npm run build";
  r.sync = false;
  r.entry = Entry{"2025-01-10",
                  "beads-123",
                  {"- Implemented user authentication", "- Files: src/auth/login.ts, src/auth/middleware.ts",
                   "- Learning: Token refresh needs to handle concurrent requests"}};
  append(path, r);
  r.entry = Entry{"2025-01-10",
                  "beads-124",
                  {"- Added password reset flow", "- Files: src/auth/reset.ts, src/email/templates/reset.html",
                   "- Learning: Email templates should be tested with real SMTP"}};
  r.verify = "ignored on an existing file";
  append(path, r);
  CHECK(read_file(path) == kSeed);

  AppendRequest p;
  p.sync = false;
  p.patterns = {"Always run the linter"};
  append(path, p);
  CHECK(read_file(path) == add_patterns(kSeed, {"Always run the linter"}));

  // creating only
  std::string fresh = scratch.path("notes.md");
  append(fresh, AppendRequest{});
  CHECK(read_file(fresh) == header_text("notes", ""));
}

namespace {

// The selection written the plain way: split forwards at rule lines, then
// filter and take from the end. show_text must agree on any input.
std::string naive_show(std::string_view doc, const ShowOptions& o, bool& found) {
  std::vector<std::string> chunks;
  std::string head, cur;
  bool in_head = true;
  for_each_line_test(doc, [&](std::string_view line, bool has_nl) {
    std::string l = std::string(line) + (has_nl ? "\n" : "");
    if (in_head) {
      head += l;
      if (line == "---") in_head = false;
      return;
    }
    cur += l;
    if (line == "---" && has_nl) chunks.push_back(std::move(cur)), cur.clear();
  });
  if (!cur.empty()) chunks.push_back(cur);
  bool filtered = !o.id.empty() || !o.since.empty();
  found = true;
  if (!filtered && !o.last && !o.max_bytes)
    return o.learnings ? without_rules(doc.substr(in_head ? doc.size() : head.size())) : std::string(doc);
  size_t budget = o.max_bytes.value_or(SIZE_MAX);
  std::string head_out = o.learnings ? "" : head;
  if (head_out.size() > budget) {
    size_t nl = budget == 0 ? std::string::npos : head_out.rfind('\n', budget - 1);
    head_out.resize(nl == std::string::npos ? 0 : nl + 1);
  }
  size_t remaining = budget - head_out.size();
  std::vector<std::string> picked;
  bool matched = false;
  for (auto it = chunks.rbegin(); it != chunks.rend(); ++it) {
    if (o.last && picked.size() >= *o.last) break;
    auto h = heading_of(*it);
    if (!h && without_rules(*it).find_first_not_of(" \t\r\n") == std::string::npos) continue;
    if (!o.id.empty() && (!h || h->id != o.id)) continue;
    if (!o.since.empty() && (!h || h->date.empty() || h->date < o.since)) continue;
    matched = true;
    std::string t = o.learnings ? without_rules(*it) : *it;
    if (t.size() > remaining) break;
    remaining -= t.size();
    picked.push_back(t);
  }
  if (filtered && !matched) {
    found = false;
    return "";
  }
  std::string out = head_out;
  for (auto it = picked.rbegin(); it != picked.rend(); ++it) out += *it;
  return out;
}

}  // namespace

TEST_CASE("progress show agrees with a plain forward split on random files", "[progress]") {
  std::srand(20250110);
  auto pick = [](int n) { return std::rand() % n; };
  for (int round = 0; round < 400; ++round) {
    std::string doc;
    int lines = pick(4) == 0 ? pick(8) : pick(400);
    for (int i = 0; i < lines; ++i) {
      switch (pick(9)) {
        case 0:
        case 1: doc += "---"; break;
        case 2: doc += loopkit::format("## 2025-01-0{} - id{}", 1 + pick(9), pick(5)); break;
        case 3: doc += "## not a date"; break;
        case 4: doc += ""; break;
        case 5: doc += std::string(pick(3) == 0 ? 5000 + pick(5000) : pick(80), 'x'); break;
        case 6: doc += pick(2) ? "x---" : "--- "; break;
        default: doc += "- bullet"; break;
      }
      if (i + 1 < lines || pick(2)) doc += '\n';
    }
    ShowOptions o;
    if (pick(3) == 0) o.last = static_cast<size_t>(pick(6));
    if (pick(3) == 0) o.max_bytes = static_cast<size_t>(pick(2) ? pick(200) : pick(40000));
    if (pick(5) == 0) o.id = loopkit::format("id{}", pick(5));
    if (pick(5) == 0) o.since = loopkit::format("2025-01-0{}", 1 + pick(9));
    o.learnings = pick(3) == 0;
    bool mine_found = false, plain_found = false;
    std::string mine = shown(doc, o, &mine_found);
    std::string plain = naive_show(doc, o, plain_found);
    INFO("round " << round << " size " << doc.size());
    REQUIRE(mine_found == plain_found);
    REQUIRE(mine == plain);
  }
}

TEST_CASE("entry_json: the heading, the bullets, Files split, each Learning", "[progress]") {
  using loopkit::progress::entry_json;
  CHECK(entry_json("\n## 2025-01-10 - b1\n- did\n- Files: a.c, b.c\n- Learning: L\nmore text\n\n---\n") ==
        R"({"date":"2025-01-10","id":"b1","bullets":["did","more text"],"files":["a.c","b.c"],"learning":["L"]})");
  CHECK(entry_json("## 2025-01-10\n- x \"q\"\n---\n") ==
        R"({"date":"2025-01-10","id":null,"bullets":["x \"q\""],"files":[],"learning":[]})");
  CHECK(entry_json("- no heading\n") == R"({"date":null,"id":null,"bullets":["no heading"],"files":[],"learning":[]})");
  CHECK(entry_json("## 2025-01-10 - \xff\n") ==
        "{\"date\":\"2025-01-10\",\"id\":\"\xef\xbf\xbd\",\"bullets\":[],\"files\":[],\"learning\":[]}");
}
