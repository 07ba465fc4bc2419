// The jq forms beyond plain paths that state-get reads (contract section 3):
// pipes, object and array construction, select, the arithmetic, comparison
// and boolean operators, the alternative //, not, empty and JSON literals,
// with jq's precedence, evaluated as jq evaluates them.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"

namespace loopkit::query {

struct Node;

struct Expression {
  std::shared_ptr<const Node> root;
  std::string text;  // as written, for messages
};

// Whether a PATH operand is jq's by its look alone: outside quoted names it
// holds white space, '|', '{', '(', "==" or "!=", or it starts with "[.".
bool is_expression(std::string_view text);

// The grammar, jq's, from the loosest (the operators of one line bind
// alike; | and // group to the right, comparisons not at all):
//   pipe   := comma ('|' comma)*
//   comma  := alt (',' alt)*
//   alt    := or ('//' alt)?
//   or     := and ('or' and)*          and := cmp ('and' cmp)*
//   cmp    := sum (('==' | '!=' | '<' | '<=' | '>' | '>=') sum)?
//   sum    := prod (('+' | '-') prod)*  prod := unary (('*' | '/' | '%') unary)*
//   unary  := '-' prod | term suffix*
//   term   := '.' | .NAME | ."NAME" | .[...] | NUMBER | STRING | true | false | null
//           | empty | not | select(pipe) | $NAME | (pipe) | [pipe] | [] | {entry, ...}
//   suffix := .NAME | ."NAME" | [N] | ["NAME"] | [$NAME] | [] | .[...]
//   entry  := NAME | "NAME" | (NAME | "NAME") ':' value   (value, jq's: [-]term suffix* joined by '|')
// A NAME is jq's: letters, digits and '_', not starting with a digit; every
// other character is an operator or an error, white space or none around it
// (.n-1 is .n - 1; a member "n-1" is .["n-1"]). # starts a comment.
// Anything else is exit 2: "malformed expression 'TEXT': REASON".
Expression parse(std::string_view text);

// parse() without the exit: the expression, or why not and whether jq
// itself could not read the text (a syntax error: jq gives it no meaning).
struct Parsed {
  std::optional<Expression> expression;
  std::string error;  // "malformed expression 'TEXT': REASON"
  bool jq_cannot_read = false;
};
Parsed try_parse(std::string_view text);

// The path an expression is when it is nothing but one path from the input
// (.a.b[0], .[]): read as a plain path, "not found" and all.
const Path* only_path(const Expression& e);

// The loopkit(7) path an expression also is when jq reads it as an operator
// over paths (.history.bd-001, .n-1): where jq's value is an error and the
// document holds no such member, that path is missing (a default applies).
const Path* spelled_path(const Expression& e);

// One state-get PATH operand, read as jq reads it wherever jq gives it a
// meaning: an expression, a plain path, or PATH//TEXT (text for a missing or
// null value, where TEXT is no jq expression: status//running).
//   - an operand starting with '.', or holding outside quoted names white
//     space, '|', '{', '(', "==" or "!=", or starting with "[." is jq's;
//     when jq cannot read it at all (.history.bd-001.status: a syntax error)
//     and it is a plain path of loopkit(7), it is that path;
//   - any other (status, a.b, ["a b"], [0]) is a loopkit path.
// Either may end in //VALUE: VALUE a jq expression is jq's alternative,
// anything else TEXT. The rest is exit 2.
struct Operand {
  Path path;                                // a plain path (or "." beside an expression)
  std::optional<std::string> text_default;  // PATH//TEXT
  std::optional<Expression> expression;
  // PATH//VALUE made an expression: PATH's last name and one value, as
  // --shell names and prints a plain path (NAME=VALUE, not an array)
  std::string path_name;
  bool single = false;
};
Operand read_operand(std::string_view text);

// Every value e yields for input, in jq's order, each handed to out. As in
// jq, a member of null or a missing member is null, an index past the end
// is null; a member of a string, [] of a scalar, an operator on types it
// does not take, a division by zero are exit 3 (jq's errors, exit 5 there).
void evaluate(const Expression& e, const json::value& input, const std::function<void(const json::value&)>& out);

}  // namespace loopkit::query
