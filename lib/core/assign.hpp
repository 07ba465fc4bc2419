// Changes to a document: the assignments of CONTRACT.md section 4 and the
// --delete/--now/--epoch options, applied to a Boost.JSON value.
#pragma once
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "core/path.hpp"

namespace loopkit {

struct Edit {
  enum Op { set, add, append, set_if_missing, remove } op = set;
  Path path;
  json::value operand;  // the value to set, add or append
  std::string source;   // as written, for messages
};

// PATH=TEXT, PATH:=JSON, PATH+=NUMBER, PATH[]=TEXT, PATH[]:=JSON, PATH?=TEXT,
// PATH?:=JSON. Malformed text or JSON that does not parse: exit 2.
Edit parse_assignment(std::string_view text);
Edit delete_edit(std::string_view path);
Edit now_edit(std::string_view path, bool epoch);  // the run's instant

// Apply one edit; missing objects on the way are created. Through a value of
// another type: exit 3. Deleting what is missing does nothing.
void apply(json::value& doc, const Edit& edit);

// The value at a path for --expect/--require (missing reads as null).
const json::value* value_at(const json::value& doc, const Path& path);
// "PATH=TEXT" or "PATH:=JSON" as a (path, expected value) pair; exit 2.
std::pair<Path, json::value> parse_expectation(std::string_view text);

}  // namespace loopkit
