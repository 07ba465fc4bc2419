// The jq forms beyond plain paths that the seeds read with (contract
// section 3): pipes, object construction, select with == and !=, the
// alternative //, empty and JSON literals, evaluated as jq evaluates them.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "core/path.hpp"

namespace loopkit::query {

struct Node;

struct Expression {
  std::shared_ptr<const Node> root;
  std::string text;  // as written, for messages
};

// Whether a PATH operand is an expression rather than a plain path: outside
// quoted names it holds white space, '|', '{', '(', "==" or "!=", or it
// starts with "[." (a plain path holds none of them; a member name that
// does is written ["a|b"]).
bool is_expression(std::string_view text);

// The grammar, in jq's precedence from the loosest:
//   pipe   := comma ('|' comma)*
//   comma  := alt (',' alt)*
//   alt    := cmp ('//' alt)?
//   cmp    := term (('==' | '!=') term)?
//   term   := PATH | LITERAL | empty | select(pipe) | (pipe) | [pipe] | [] | {entry, ...}
//   entry  := NAME | "NAME" | (NAME | "NAME") ':' value   (value: a pipe without ',')
// PATH is a loopkit path starting with '.' (.stages[].name, .["a b"]); [A]
// collects A's values into one array.
// Anything else is exit 2: "malformed expression 'TEXT': REASON".
Expression parse(std::string_view text);

// Every value e yields for input, in jq's order, each handed to out. As in
// jq, a member of null or a missing member is null, an index past the end
// is null; a member of a string, or [] of a scalar, is exit 3.
void evaluate(const Expression& e, const json::value& input, const std::function<void(const json::value&)>& out);

}  // namespace loopkit::query
