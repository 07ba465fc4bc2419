// The path syntax of loopkit(7), PATHS: .a.b, ["k"], [3], [-1], [].
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/json.hpp"

namespace loopkit {

struct Segment {
  enum Kind { key, elem, all } kind;  // .name, [N], []
  std::string name;                   // key
  long long index = 0;                // index, negative from the end
};

struct Path {
  std::vector<Segment> segments;
  std::string text;  // as written, for messages
  bool has_all() const;
  // the last member name, for state-get --shell ("" if it ends in an index)
  std::string last_name() const;
};

// Whether c ends a bare member name (.name): a path or operator character,
// or white space.
bool ends_bare_name(char c);

// A variable for the paths parsed after it, as jq's --arg NAME VALUE:
// [$NAME] is a member named VALUE, whatever its bytes. NAME is
// [A-Za-z_][A-Za-z0-9_]*, VALUE UTF-8 (else exit 2); defined again, the
// last wins. An undefined one is a malformed path.
void define_path_variable(const std::string& name, const std::string& value);
// the value of a variable defined so (the last definition), or nullopt
std::optional<std::string> path_variable(std::string_view name);

// Parses a whole path; exit 2 "malformed path 'P': REASON".
Path parse_path(std::string_view text);
// Parses a path at the start of text and stops at the first character that
// cannot continue it (an assignment operator); returns the characters used.
std::size_t parse_path_prefix(std::string_view text, Path& out);

// "string", "number", "object", ... for messages
const char* type_name(const json::value& v);
// the same for a value known only by the first byte of its JSON text
const char* text_type_name(char first);
// a type name of those two with its article, as a message says it: "an
// array", "an object", "a string", and "null" alone
const char* with_article(const char* type);
// the first `upto` segments of p as text (".a[2]", "." for none), for messages
std::string path_prefix_text(const Path& p, std::size_t upto);

// The offsets of WORD's characters outside any quoted name ("..." with its
// escapes), in order, each handed to at; stops early when at returns false.
// One walk for every reader of path words: completion, state-get's test of
// whether an operand is an expression.
template <class At>
void each_unquoted(std::string_view word, At at) {
  bool in_string = false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (!at(i, c)) {
      return;
    }
  }
}

}  // namespace loopkit
