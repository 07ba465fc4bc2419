// lib/sys/base/shellwords: lines split as bash splits them (state-set --stream).
#include <catch2/catch.hpp>

#include "sys/base/shellwords.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;
using Words = std::vector<std::string>;

TEST_CASE("issue 22: what printf %q writes reads back as the value it quoted", "[shellwords]") {
  CHECK(split_shell_words("$'note=a\\nb'") == Words{"note=a\nb"});
  CHECK(split_shell_words("it\\'s=1 a\\ b=2 ''") == Words{"it's=1", "a b=2", ""});
  CHECK(split_shell_words("$'\\t\\e\\E\\a\\b\\f\\v\\r\\\\\\'\\\"\\?'") == Words{"\t\x1b\x1b\a\b\f\v\r\\'\"?"});
  CHECK(split_shell_words("$'\\101\\x42\\x4\\u00e9\\U0001F600\\cA\\c?\\z\\x'") ==
        Words{"AB\x04\xc3\xa9\xf0\x9f\x98\x80\x01\x7f\\z\\x"});
  CHECK(split_shell_words("$\"a b\"c \"x\\$y\\`z\\\\\\\"\\q\"") == Words{"a bc", "x$y`z\\\"\\q"});
  CHECK(split_shell_words("a=$ b=5$ c=x~ n.x=~ d={} e=a,b f=a{b}c \\~ '$x' \"$\"") ==
        Words{"a=$", "b=5$", "c=x~", "n.x=~", "d={}", "e=a,b", "f=a{b}c", "~", "$x", "$"});
  CHECK(split_shell_words("a # b c") == Words{"a"});
  CHECK(split_shell_words("# a").empty());
  CHECK(split_shell_words("a#b '#c' \\#d") == Words{"a#b", "#c", "#d"});
  CHECK(split_shell_words(" \t\r").empty());
}

TEST_CASE("issue 22: what bash would expand or split is exit 2", "[shellwords]") {
  for (const char* bad : {"$HOME",    "${x}", "$(id)", "$((1))", "$1",        "$@",         "`id`",        "\"$x\"",
                          "\"`id`\"", "a;b",  "a&b",   "a|b",    "a<b",       "a>b",        "(a)",         "~",
                          "~/x",      "x=~",  "x+=~",  "x=a:~",  "{a,b}",     "{1..3}",     "a{b,{c}}",    "a\\",
                          "'a",       "\"a",  "$'a",   "$'\\0'", "$'a\\x00'", "$'\\ud800'", "$'\\U110000'"}) {
    INFO(bad);
    CHECK_THROWS_AS(split_shell_words(bad), Error);
    try {
      split_shell_words(bad);
    } catch (const Error& e) {
      CHECK(e.code() == Exit::usage);
    }
  }
}
