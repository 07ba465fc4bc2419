// lib/cli/tool: the option table binds each option to its config field as
// cxxopts parses it, in command-line order; every tool gets -V/--version;
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
  cxxopts::Options table("demo", "demo");
  cli::Options o(table);
  declare(o, c);
  Argv a({"demo", "--each", "a", "-f", "--mark", "--each", "b", "--text", "x", "--seconds", "1.5", "--count", "3"});
  table.parse(a.argc(), a.argv());
  CHECK(c.flag);
  CHECK(c.text == "x");
  CHECK(c.seconds == 1.5);
  CHECK(c.count == 3);
  CHECK(c.sequence == std::vector<std::string>{"each a", "mark", "each b"});
}

TEST_CASE("a bound value out of range is a usage error naming its option", "[cli]") {
  for (auto [option, value] : {std::pair{"--seconds", "nan"}, {"--seconds", "-1"}, {"--count", "10"}}) {
    Config c;
    cxxopts::Options table("demo", "demo");
    cli::Options o(table);
    declare(o, c);
    Argv a({"demo", option, value});
    try {
      table.parse(a.argc(), a.argv());
      FAIL("accepted " << option << " " << value);
    } catch (const Error& e) {
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
