#include "core/scan/assign_ops.hpp"

#include <string>

#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::assign_ops {

namespace {
// The first character of -=, /=, %= and //= is one a bare name may hold:
// name_operator takes it back from the name.
constexpr Operator operators[] = {
    {":=", set, 'j'},
    {"=", set, 't'},
    {"+=", add, 'n'},
    {"-=", subtract, 'n'},
    {"*=", multiply, '*'},
    {"/=", divide, 'n'},
    {"%=", remainder, 'n'},
    {"//=", alternative, 'j'},
    {"?:=", set_if_missing, 'j'},
    {"?=", set_if_missing, 't'},
};
constexpr std::string_view in_name_chars = "-/%|&^<>~";  // what a bare name holds of them
constexpr std::string_view operator_chars = "-/%|&^<>~*+?:!";
constexpr std::string_view all_operators = "=, :=, +=, -=, *=, /=, %=, //=, ?=, ?:=, []= or []:=";
}  // namespace

const Operator* find(std::string_view rest) {
  const Operator* op = nullptr;
  for (const auto& o : operators)
    if (rest.substr(0, o.spelling.size()) == o.spelling) op = &o;
  return op;
}

const Operator& read_operator(std::string_view text, std::string_view rest, Path& path, bool& appending) {
  appending = !path.segments.empty() && path.segments.back().kind == Segment::all;
  if (appending) path.segments.pop_back();
  for (const auto& s : path.segments)
    if (s.kind == Segment::all)
      fail_usage(loopkit::format("malformed assignment {}: '[]' may only end the path", quoted(text)));
  const Operator* op = find(rest);
  if (!op) unknown_operator(text, rest);
  if (appending && op->kind != set)
    fail_usage(loopkit::format("malformed assignment {}: after '[]' only = and := (append)", quoted(text)));
  return *op;
}

std::size_t name_operator(std::string_view text, std::size_t n, Path& path) {
  if (n >= text.size() || text[n] != '=' || path.segments.empty() || path.segments.back().kind != Segment::key)
    return n;
  std::size_t run = 0;
  while (run < n && in_name_chars.find(text[n - 1 - run]) != std::string_view::npos) ++run;
  std::string& name = path.segments.back().name;
  if (run == 0 || name.size() < run || std::string_view(name).substr(name.size() - run) != text.substr(n - run, run))
    return n;
  name.resize(name.size() - run);
  if (name.empty())
    fail_usage(loopkit::format("malformed assignment {}: no member name before the operator", quoted(text)));
  path.text = std::string(text.substr(0, n - run));
  return n - run;
}

void unknown_operator(std::string_view text, std::string_view rest) {
  std::size_t run = 0;
  while (run < rest.size() && operator_chars.find(rest[run]) != std::string_view::npos) ++run;
  if (run < rest.size() && rest[run] == '=' && run > 0) {
    std::string op(rest.substr(0, run + 1));
    fail_usage(loopkit::format("malformed assignment {}: state-set has no operator {}{}; it has {}", quoted(text), op,
                               op == "|=" ? " (jq's update with a filter: compute the value and write PATH:=JSON)" : "",
                               all_operators));
  }
  fail_usage(loopkit::format("malformed assignment {}: expected {} after the path", quoted(text), all_operators));
}

}  // namespace loopkit::assign_ops
