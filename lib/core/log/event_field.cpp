// An event's fields (core/log/event.hpp: parse_field): KEY=TEXT and KEY:=JSON
// read as state-set reads an assignment (core/edit/assign.cpp), the same checks
// in the same order with the same messages, but on the text: event-append
// builds no document and carries no JSON library (issue 24).
#include <vector>

#include "core/scan/assign_ops.hpp"
#include "core/log/event.hpp"
#include "core/json/json_members.hpp"
#include "core/scan/path.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::event {

namespace {

constexpr std::string_view reserved[] = {"seq", "ts", "type", "session"};
constexpr std::size_t max_depth = 1000;  // json::max_depth

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// JSON text on one line: the whitespace between tokens dropped, the tokens
// (a number's digits, a string's escapes) kept exactly.
std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) out += text[++i];
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (!is_ws(c)) {
      out += c;
    }
  }
  return out;
}

// json::parse's verdict on an operand, worded as assign.cpp words it; the
// operand's first character
char check_json(std::string_view operand, std::string_view whole) {
  static std::vector<JsonMemberSpan> spans;
  try {
    read_json_members(operand, "value", spans);
  } catch (const Error& e) {
    std::string why = e.what();
    auto p = why.find("not valid JSON");
    fail_usage(
        loopkit::format("malformed assignment {}: {}", quoted(whole), p == std::string::npos ? why : why.substr(p)));
  }
  std::size_t i = 0;
  while (is_ws(operand[i])) ++i;
  return operand[i];
}

// json::depth of valid JSON text: the containers nested in it, itself included
std::size_t depth_of(std::string_view v) {
  std::size_t depth = 0, most = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (c == '"') {
      for (++i; v[i] != '"'; ++i) i += v[i] == '\\';
    } else if (c == '{' || c == '[') {
      most = std::max(most, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return most;
}

// An operand that must be JSON: its first character (check_json), or for
// //= the message assign.cpp gives for what is not JSON
char check_operand(const assign_ops::Operator& op, std::string_view operand, std::string_view text) {
  if (op.kind != assign_ops::alternative) return check_json(operand, text);
  try {
    static std::vector<JsonMemberSpan> spans;
    read_json_members(operand, "value", spans);
  } catch (const Error&) {
    fail_usage(
        loopkit::format("malformed assignment {}: //= takes JSON, as jq's right side: write "
                        "PATH//='\"text\"' for a string (--now 'PATH?' sets the time when missing or null)",
                        quoted(text)));
  }
  return check_json(operand, text);
}

bool is_number_start(char c) { return c == '-' || (c >= '0' && c <= '9'); }

}  // namespace

Field parse_field(std::string_view text) {
  Path path;
  const std::size_t n = assign_ops::name_operator(text, parse_path_prefix(text, path), path);
  if (n == 0) fail_usage(loopkit::format("malformed assignment {}: no path before the operator", quoted(text)));
  std::string_view rest = text.substr(n);
  bool appending = false;
  const assign_ops::Operator* op = &assign_ops::read_operator(text, rest, path, appending);
  const std::string_view operand = rest.substr(op->spelling.size());
  const bool is_json = op->operand != 't';
  if (!is_json && !json::is_utf8(operand))
    fail_usage(loopkit::format("malformed assignment for {}: the text is not UTF-8", quoted(path.text)));
  const char first = is_json ? check_operand(*op, operand, text) : '"';
  if (op->operand == '*' && first != '{' && !is_number_start(first))
    fail_usage(loopkit::format("malformed assignment {}: *= takes a number or a JSON object", quoted(text)));
  if (op->operand == 'n' && !is_number_start(first))
    fail_usage(loopkit::format("malformed assignment {}: {} takes a number", quoted(text), op->spelling));
  const std::size_t depth = path.segments.size() + (appending ? 1 : 0) + (is_json ? depth_of(operand) : 0);
  if (depth > max_depth)
    fail_usage(loopkit::format("malformed assignment {}: the value would lie {} levels deep; readers stop at {}",
                               quoted(text.substr(0, std::min<std::size_t>(text.size(), 40))), depth, max_depth));
  if (appending || op->kind != assign_ops::set || path.segments.size() != 1 || path.segments[0].kind != Segment::key)
    fail_usage("malformed field " + loopkit::quoted(text) + ": fields are KEY=TEXT or KEY:=JSON");
  Field f{path.segments[0].name, ""};
  for (auto r : reserved)
    if (f.key == r) fail_usage("field " + loopkit::quoted(f.key) + " is set by event-append itself");
  if (is_json) f.json = one_line(operand);
  else append_json_string(f.json, operand);
  return f;
}

}  // namespace loopkit::event
