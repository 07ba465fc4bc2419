// libFuzzer target: the assignment parser (lib/core/edit/assign.hpp). The input
// is one argument as state-set gets it. Properties: only usage errors
// (exit 2) leave parse_assignment, parse_expectation and delete_edit; what
// they accept is well formed ([] only where allowed, += only with a number,
// a finite operand); written back in a canonical form (names quoted, value
// as compact JSON) it parses to the same edit.
#include <cmath>

#include "core/edit/assign.hpp"
#include "fuzz_common.hpp"

using namespace loopkit;

namespace {

const char* op_text(Edit::Op op) {
  switch (op) {
    case Edit::set: return ":=";
    case Edit::add: return "+=";
    case Edit::append: return "[]:=";
    case Edit::set_if_missing: return "?:=";
    case Edit::merge: return "*=";
    case Edit::subtract: return "-=";
    case Edit::multiply: return "*=";
    case Edit::divide: return "/=";
    case Edit::remainder: return "%=";
    case Edit::alternative: return "//=";
    case Edit::remove: break;
  }
  return "";
}

void check_assignment(std::string_view text) {
  Edit e;
  try {
    e = parse_assignment(text);
  } catch (const Error& err) {
    fuzz::check_code(err, {Exit::usage}, "parse_assignment");
    return;
  }
  fuzz::check(e.op != Edit::remove, "parse_assignment made a delete");
  fuzz::check(e.source == text, "parse_assignment: source is not the input");
  fuzz::check(!e.path.has_all(), "parse_assignment kept a [] in the path");
  if (e.is_arithmetic())
    fuzz::check(json::is_numeric(e.operand), "+= -= *= /= %= with an operand that is not a number");
  fuzz::check(fuzz::is_known("overflow") || fuzz::finite_everywhere(e.operand),
              "an operand that is not finite was accepted: " + std::string(text));
  if (!fuzz::names_are_utf8(e.path)) return;
  std::string canon = fuzz::canonical_path(e.path);
  canon += op_text(e.op);
  canon += json::compact(e.operand);
  try {
    Edit again = parse_assignment(canon);
    fuzz::check(again.op == e.op, "canonical form " + canon + " has another operator");
    fuzz::check(fuzz::same_segments(again.path, e.path), "canonical form " + canon + " has another path");
    fuzz::check(fuzz::same_json(again.operand, e.operand), "canonical form " + canon + " has another value");
  } catch (const Error& err) {
    fuzz::finding("canonical form " + canon + " of an accepted assignment is refused: " + err.what());
  }
}

void check_expectation(std::string_view text) {
  try {
    auto [path, value] = parse_expectation(text);
    fuzz::check(!path.has_all(), "parse_expectation kept a []");
    fuzz::check(fuzz::is_known("overflow") || fuzz::finite_everywhere(value),
                "an expectation that is not finite was accepted");
  } catch (const Error& err) {
    fuzz::check_code(err, {Exit::usage}, "parse_expectation");
  }
}

void check_delete(std::string_view text) {
  try {
    Edit e = delete_edit(text);
    fuzz::check(e.op == Edit::remove && !e.path.has_all(), "delete_edit made something else");
    Path p = parse_path(text);
    fuzz::check(fuzz::same_segments(p, e.path), "delete_edit and parse_path disagree");
  } catch (const Error& err) {
    fuzz::check_code(err, {Exit::usage}, "delete_edit");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_assignment(text);
  check_expectation(text);
  check_delete(text);
  return 0;
}
