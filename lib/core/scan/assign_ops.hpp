#pragma once
// The operators of an assignment (PATH=TEXT, PATH:=JSON, PATH-=N, ...) as
// state-set's parse_assignment (core/edit/assign.cpp) and event-append's fields
// (core/log/event_field.cpp) both read them: one table, no JSON library.
#include <cstddef>
#include <string_view>

#include "core/scan/path.hpp"

namespace loopkit::assign_ops {

enum Kind { set, add, subtract, multiply, divide, remainder, alternative, set_if_missing };

struct Operator {
  std::string_view spelling;
  Kind kind;
  char operand;  // 't' text, 'j' JSON, 'n' a number, '*' a number or an object
};

// The operator REST starts with (the longest spelling), or null.
const Operator* find(std::string_view rest);

// The run of operator characters that ends the path's last bare name just
// before '=' (n-=1, total/=2, x|=y) is the operator's, never the name's:
// gives it back from PATH and returns the path's true length (N, the length
// parse_path_prefix read, when there is nothing to give back).
std::size_t name_operator(std::string_view text, std::size_t n, Path& path);

// The operator at REST, after PATH (TEXT the whole assignment, for the
// words of a usage error): a path that ends in '[]' is an append, which
// loses that segment and takes only = and :=; '[]' anywhere else is exit 2,
// as is no operator. APPENDING says which.
const Operator& read_operator(std::string_view text, std::string_view rest, Path& path, bool& appending);

// No operator at REST: exit 2, naming the spellings that work.
[[noreturn]] void unknown_operator(std::string_view text, std::string_view rest);

}  // namespace loopkit::assign_ops
