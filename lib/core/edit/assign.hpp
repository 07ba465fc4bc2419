// Changes to a document: the assignments of loopkit(7), ASSIGNMENTS, and the
// --delete/--now/--epoch options, parsed into edits (made on text by
// core/edit/textedit.hpp; on a parsed value by the tests' reference,
// tests/unit/reference.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"

namespace loopkit {

struct Edit {
  enum Op {
    set,
    add,
    append,
    set_if_missing,
    remove,
    merge,
    subtract,
    multiply,
    divide,
    remainder,
    alternative
  } op = set;
  // +=, -=, *=N, /=, %=: the operand is a step, not a value stored
  bool is_arithmetic() const {
    return op == add || op == subtract || op == multiply || op == divide || op == remainder;
  }
  char symbol() const {
    return op == subtract ? '-' : op == multiply ? '*' : op == divide ? '/' : op == remainder ? '%' : '+';
  }
  Path path;
  json::value operand;  // the value to set, add or append
  std::string source;   // as written, for messages
};

// PATH=TEXT, PATH:=JSON, PATH+=NUMBER, PATH[]=TEXT, PATH[]:=JSON, PATH?=TEXT,
// PATH?:=JSON, PATH*=OBJECT (jq's *: objects within objects merged again,
// anything else replaced; a missing or null PATH is set); jq's update
// operators PATH-=N, PATH*=N, PATH/=N, PATH%=N on numbers and PATH//=JSON
// (set when missing, null or false). A run of -/%|&^<>~ that ends a bare
// name before '=' is an operator, never part of the name (n-=1; a name
// ending so is written ["n-"]); one state-set has not (|=, ^=) is exit 2. Malformed text or
// JSON that does not parse: exit 2; so is what no reader could read back: a
// number out of range, text or a member name that is not UTF-8, a value that
// would lie deeper than json::max_depth. Number literals keep their text
// (`:=1e2` is written `1e2`).
Edit parse_assignment(std::string_view text);
Edit delete_edit(std::string_view path);
// --now PATH and --epoch PATH; "PATH?" sets it only when missing or null
Edit now_edit(std::string_view path, bool epoch);                      // the run's instant
Edit now_edit_at(std::string_view path, bool epoch, int64_t seconds);  // a given instant (--stream lines)

// "PATH=TEXT" or "PATH:=JSON" as a (path, expected value) pair; exit 2.
std::pair<Path, json::value> parse_expectation(std::string_view text);

}  // namespace loopkit
