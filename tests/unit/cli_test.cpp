// lib/cli/tool: the option table binds each option to its config field as
// the table parses it, in command-line order; every tool gets -V/--version;
// a "no" is returned by cli::no, silenced by -q.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include "cli/tool.hpp"

using namespace loopkit;

namespace {
struct Argv {
  std::vector<std::string> words;
  std::vector<char*> ptrs;
  explicit Argv(std::vector<std::string> w) : words(std::move(w)) {
    for (auto& s : words) ptrs.push_back(s.data());
    ptrs.push_back(nullptr);
  }
  int argc() const { return static_cast<int>(words.size()); }
  char** argv() { return ptrs.data(); }
};

// What fd (1 or 2) receives while f runs.
template <class F>
std::string captured(int fd, F f) {
  char tmpl[] = "/tmp/cli-test.XXXXXX";
  int file = mkstemp(tmpl);
  REQUIRE(file >= 0);
  std::fflush(fd == 1 ? stdout : stderr);
  int saved = dup(fd);
  dup2(file, fd);
  f();
  std::fflush(fd == 1 ? stdout : stderr);
  dup2(saved, fd);
  close(saved);
  std::string text;
  char buf[4096];
  lseek(file, 0, SEEK_SET);
  for (ssize_t n; (n = read(file, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(file);
  unlink(tmpl);
  return text;
}

struct Config {
  bool flag = false;
  std::string text;
  std::optional<double> seconds;
  long long count = 0;
  std::vector<std::string> sequence;
};

void declare(cli::Options& o, Config& c) {
  o.flag("f,flag", "a flag", c.flag)
      .text("text", "a text", "TEXT", c.text)
      .number("seconds", "a number", "SECONDS", c.seconds, 0)
      .integer("count", "a whole number", "N", c.count, 1, 9)
      .value("each", "repeatable", "E", [&c](const std::string& v) { c.sequence.push_back("each " + v); })
      .flag("mark", "an action", [&c] { c.sequence.push_back("mark"); });
}
}  // namespace

TEST_CASE("the option table binds values to fields in command-line order", "[cli]") {
  Config c;
  cli::Options o;
  declare(o, c);
  Argv a({"demo", "--each", "a", "-f", "--mark", "--each", "b", "--text", "x", "--seconds", "1.5", "--count", "3"});
  o.parse(a.argc(), a.argv());
  CHECK(c.flag);
  CHECK(c.text == "x");
  CHECK(c.seconds == 1.5);
  CHECK(c.count == 3);
  CHECK(c.sequence == std::vector<std::string>{"each a", "mark", "each b"});
}

TEST_CASE("a bound value out of range is a usage error naming its option", "[cli]") {
  for (auto [option, value] : {std::pair{"--seconds", "nan"}, {"--seconds", "-1"}, {"--count", "10"}}) {
    Config c;
    cli::Options o;
    declare(o, c);
    Argv a({"demo", option, value});
    try {
      o.parse(a.argc(), a.argv());
      FAIL("accepted " << option << " " << value);
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.code() == Exit::usage);
      CHECK(std::string(e.what()).rfind(std::string(option) + ": not a", 0) == 0);
    }
  }
}

TEST_CASE("-V and --version print the tool's name and loopkit's version", "[cli]") {
  ToolInfo info{"demo", "a demo", "ARG"};
  for (const char* flag : {"-V", "--version"}) {
    Argv a({"demo", flag});
    int code = -1;
    std::string out = captured(1, [&] {
      code = run_tool(
          info, a.argc(), a.argv(), [](cli::Options&) {}, [](const Args&) { return 7; });
    });
    CHECK(code == 0);
    CHECK(out.rfind("demo (loopkit) ", 0) == 0);
  }
}

TEST_CASE("cli::no returns exit 1 and says why unless -q", "[cli]") {
  ToolInfo info{"demo", "a demo", "ARG"};
  for (bool quiet : {false, true}) {
    Argv a(quiet ? std::vector<std::string>{"demo", "-q"} : std::vector<std::string>{"demo"});
    int code = -1;
    std::string err = captured(2, [&] {
      code = run_tool(
          info, a.argc(), a.argv(), [](cli::Options&) {}, [](const Args&) { return cli::no("no lock 'x'"); });
    });
    CHECK(code == 1);
    CHECK(err == (quiet ? "" : "demo: no lock 'x'\n"));
  }
}

TEST_CASE("an optional value left out is implied; a word that is no value stays an operand", "[cli]") {
  ToolInfo info{"demo", "a demo", "FILE"};
  auto run = [&](std::vector<std::string> words, std::string& wait, std::vector<std::string>& operands) {
    Argv a(std::move(words));
    return run_tool(
        info, a.argc(), a.argv(),
        [&](cli::Options& o) {
          o.optional("w,wait", "wait", "SECONDS", "inf", cli::looks_like_number,
                     [&](const std::string& t) { wait = t; });
        },
        [&](const Args& args) {
          operands = args.operands;
          return 0;
        });
  };
  using Words = std::vector<std::string>;
  for (auto [words, expect_wait, expect_operands] : {std::tuple{Words{"demo", "--wait", "F"}, "inf", Words{"F"}},
                                                     {Words{"demo", "-w", "F"}, "inf", Words{"F"}},
                                                     {Words{"demo", "F", "--wait"}, "inf", Words{"F"}},
                                                     {Words{"demo", "--wait", "10", "F"}, "10", Words{"F"}},
                                                     {Words{"demo", "-w", ".5", "F"}, ".5", Words{"F"}},
                                                     {Words{"demo", "--wait=3", "F"}, "3", Words{"F"}},
                                                     {Words{"demo", "--wait", "--", "F"}, "inf", Words{"F"}}}) {
    std::string wait;
    std::vector<std::string> operands;
    CHECK(run(words, wait, operands) == 0);
    CHECK(wait == expect_wait);
    CHECK(operands == expect_operands);
  }
}

TEST_CASE("looks_like_number: what an option's own check should refuse or take", "[cli]") {
  for (const char* w : {"", "10", "-1", "+2", ".5", "inf", "INFINITY", "nan", "1e3", "5x"})
    CHECK(cli::looks_like_number(w));
  for (const char* w : {"F", "lock.lock", "--pid", "-x", "in", "i"}) CHECK_FALSE(cli::looks_like_number(w));
}

TEST_CASE("a two-word option takes the operand after it; without one it is a usage error", "[cli]") {
  ToolInfo info{"demo", "a demo", "FILE"};
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> operands;
  auto declare = [&](cli::Options& o) {
    o.pair("arg", "a pair", "NAME VALUE",
           [&](const std::string& n, const std::string& v) { pairs.emplace_back(n, v); });
  };
  auto keep = [&](const Args& a) {
    operands = a.operands;
    return 0;
  };
  Argv a({"demo", "F", "--arg", "k", "v w", "P", "--arg", "k", "x"});
  CHECK(run_tool(info, a.argc(), a.argv(), declare, keep) == 0);
  CHECK(pairs == std::vector<std::pair<std::string, std::string>>{{"k", "v w"}, {"k", "x"}});
  CHECK(operands == std::vector<std::string>{"F", "P"});
  Argv b({"demo", "F", "--arg", "k"});
  std::string err = captured(2, [&] { CHECK(run_tool(info, b.argc(), b.argv(), declare, keep) == 2); });
  CHECK(err == "demo: --arg 'k': its second word is missing\n");
}

// Names are split when the tool is compiled
static_assert(cli::Names("w,wait,old").letter == 'w');
static_assert(cli::Names("w,wait,old").first_long == "wait");
static_assert(cli::Names("w,wait,old").older == "old");
static_assert(cli::Names("heartbeat,every,beat").older == "every,beat");
static_assert(cli::Names("x").first_long.empty() && cli::Names("x").letter == 'x');
static_assert(cli::Names("no-sync").letter == 0 && cli::Names("no-sync").older.empty());
// two names whose bits are one: only the comparison tells them apart
static_assert(cli::Names("axe-z").hint == cli::Names("aye-z").hint);

TEST_CASE("names made at compile time hold their parts at run time too", "[cli]") {
  // clang 16 once emitted them wrongly: the static_asserts above held, these did not
  const cli::Names a = "w,wait,old", b = "seconds";
  CHECK(a.letter == 'w');
  CHECK(a.first_long == "wait");
  CHECK(a.older == "old");
  CHECK(b.first_long == "seconds");
  CHECK(b.hint == cli::Names::hint_of("seconds"));
}

TEST_CASE("only the options a line names are declared, by any of their names, bits colliding or not", "[cli]") {
  ToolInfo info{"demo", "a demo", "FILE"};
  struct Seen {
    bool axe = false, aye = false, wait = false, quiet_flag = false;
    std::string every;
    std::vector<std::string> operands;
  };
  auto run = [&](std::vector<std::string> words, Seen& s) {
    Argv a(std::move(words));
    auto declare = [&](cli::Options& o) {
      o.flag("axe-z", "one", s.axe)
          .flag("aye-z", "its bit's twin", s.aye)
          .flag("w,wait,older-wait", "letter, long and older", s.wait)
          .text("heartbeat,every", "an older long name", "SECONDS", s.every)
          .flag("n,nothing", "never named", s.quiet_flag);
    };
    auto keep = [&](const Args& args) {
      s.operands = args.operands;
      return 0;
    };
    return run_tool(info, a.argc(), a.argv(), declare, keep);
  };
  Seen a;
  CHECK(run({"demo", "--aye-z", "F"}, a) == 0);
  CHECK((a.aye && !a.axe && !a.wait && !a.quiet_flag));
  CHECK(a.operands == std::vector<std::string>{"F"});
  for (const char* w : {"-w", "--wait", "--older-wait"}) {
    Seen b;
    CHECK(run({"demo", "F", w}, b) == 0);
    CHECK((b.wait && !b.axe && !b.aye));
  }
  Seen c;
  CHECK(run({"demo", "--every=5", "F"}, c) == 0);
  CHECK(c.every == "5");
  // more long names than the line's list holds: the whole table
  Seen d;
  CHECK(run({"demo", "--axe-z", "--aye-z", "--wait", "--every", "1", "--heartbeat", "2", "--axe-z", "--aye-z", "--wait",
             "--older-wait", "F"},
            d) == 0);
  CHECK((d.axe && d.aye && d.wait && d.every == "2"));
  // a name no option has is still the parser's error
  Seen e;
  std::string err = captured(2, [&] { CHECK(run({"demo", "--axe-y", "F"}, e) == 2); });
  CHECK(err.rfind("demo: option 'axe-y' does not exist", 0) == 0);
}
