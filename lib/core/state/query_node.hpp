// The parsed form of a jq expression, internal to core/state/query*.cpp: the
// parser (query.cpp) builds it, the evaluator (query_eval.cpp) walks it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"

namespace loopkit::query {

struct Node {
  enum Kind {
    path,         // where, on the input (left, when set, gives the input: (A).b)
    literal,      // value
    object,       // members
    pipe,         // left | right
    comma,        // left, right
    alternative,  // left // right
    compare,      // left op right: == != < <= > >=  (op: '=', '!', '<', 'l', '>', 'g')
    arith,        // left op right: + - * / %
    negate,       // - left
    and_,         // left and right
    or_,          // left or right
    not_,         // not, on the input
    select,       // select(left)
    collect,      // [left], [] when left is empty
    empty
  } kind = empty;
  char op = 0;
  Path where;
  json::value value;
  std::vector<std::pair<std::string, std::shared_ptr<Node>>> members;  // in the order written
  std::shared_ptr<Node> left, right;
  // compare, arith: the text as written when it is also a loopkit(7) path
  // (.history.bd-001, .n-1): where jq's reading is an error, the member it
  // names, if the input holds one, is the value
  std::optional<Path> spelled;
};

}  // namespace loopkit::query
