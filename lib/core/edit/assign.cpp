#include "core/edit/assign.hpp"

#include "core/scan/assign_ops.hpp"
#include "core/edit/edit_rules.hpp"
#include "sys/base/format.hpp"

#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"

namespace loopkit {

namespace rules = edit_rules;

namespace {

json::value operand_json(std::string_view text, std::string_view whole, json::Literals keep) {
  try {
    return json::parse(text, "value", {}, keep);
  } catch (const Error& e) {
    std::string why = e.what();
    auto p = why.find("not valid JSON");
    fail_usage(
        loopkit::format("malformed assignment {}: {}", quoted(whole), p == std::string::npos ? why : why.substr(p)));
  }
}

// PATH//=JSON: jq's right side is a value; a bare word is refused with the
// spellings that work (created_at//=now was once a member "created_at//")
json::value alternative_operand(std::string_view rest, std::string_view whole, json::Literals keep) {
  try {
    return json::parse(rest, "value", {}, keep);
  } catch (const Error&) {
    fail_usage(
        loopkit::format("malformed assignment {}: //= takes JSON, as jq's right side: write "
                        "PATH//='\"text\"' for a string (--now 'PATH?' sets the time when missing or null)",
                        quoted(whole)));
  }
}

// assign_ops' kinds as edits
Edit::Op edit_op(assign_ops::Kind k) {
  switch (k) {
    case assign_ops::set: return Edit::set;
    case assign_ops::add: return Edit::add;
    case assign_ops::subtract: return Edit::subtract;
    case assign_ops::multiply: return Edit::multiply;
    case assign_ops::divide: return Edit::divide;
    case assign_ops::remainder: return Edit::remainder;
    case assign_ops::alternative: return Edit::alternative;
    case assign_ops::set_if_missing: return Edit::set_if_missing;
  }
  return Edit::set;
}

Edit parse_assignment_keeping(std::string_view text, json::Literals keep) {
  Edit e;
  e.source = std::string(text);
  std::size_t n = assign_ops::name_operator(text, parse_path_prefix(text, e.path), e.path);
  if (n == 0) fail_usage(loopkit::format("malformed assignment {}: no path before the operator", quoted(text)));
  std::string_view rest = text.substr(n);
  bool appending = false;
  const assign_ops::Operator* op = &assign_ops::read_operator(text, rest, e.path, appending);
  rest.remove_prefix(op->spelling.size());
  e.op = appending ? Edit::append : edit_op(op->kind);
  // a file holding invalid UTF-8 could never be read back
  if (op->operand == 't' && !json::is_utf8(rest))
    fail_usage(loopkit::format("malformed assignment for {}: the text is not UTF-8", quoted(e.path.text)));
  if (op->operand == 't') e.operand = json::value(json::string(rest));
  else if (op->kind == assign_ops::alternative) e.operand = alternative_operand(rest, text, keep);
  else e.operand = operand_json(rest, text, keep);
  if (op->operand == '*' && e.operand.is_object()) e.op = Edit::merge;
  else if (op->operand == '*' && !json::is_numeric(e.operand))
    fail_usage(loopkit::format("malformed assignment {}: *= takes a number or a JSON object", quoted(text)));
  if (op->operand == 'n' && !json::is_numeric(e.operand))
    fail_usage(loopkit::format("malformed assignment {}: {} takes a number", quoted(text), op->spelling));
  // the value lies inside one container per segment (and the array it joins)
  std::size_t depth = e.path.segments.size() + (appending ? 1 : 0) + json::depth(e.operand);
  if (depth > json::max_depth)
    fail_usage(loopkit::format("malformed assignment {}: the value would lie {} levels deep; readers stop at {}",
                               quoted(text.substr(0, std::min<std::size_t>(text.size(), 40))), depth, json::max_depth));
  return e;
}

}  // namespace

Edit parse_assignment(std::string_view text) { return parse_assignment_keeping(text, json::Literals::as_written); }

Edit delete_edit(std::string_view path) {
  Edit e;
  e.op = Edit::remove;
  e.path = parse_path(path);
  if (e.path.has_all()) rules::all_names_many(e.path);
  e.source = "--delete " + std::string(path);
  return e;
}

Edit now_edit(std::string_view path, bool epoch) { return now_edit_at(path, epoch, now_epoch()); }

Edit now_edit_at(std::string_view path, bool epoch, int64_t seconds) {
  Edit e;
  e.op = Edit::set;
  e.source = (epoch ? "--epoch " : "--now ") + std::string(path);
  // PATH? sets the time only when PATH is missing or null, as ?= does
  if (path.size() > 1 && path.back() == '?') {
    e.op = Edit::set_if_missing;
    path.remove_suffix(1);
  }
  e.path = parse_path(path);
  if (e.path.has_all()) rules::all_names_many(e.path);
  e.operand = epoch ? json::value(seconds) : json::value(json::string(iso8601_utc(seconds)));
  return e;
}

std::pair<Path, json::value> parse_expectation(std::string_view text) {
  // compared as a reader reads the file: 1.0 is 1, a big integer its digits
  Edit e = parse_assignment_keeping(text, json::Literals::big_integers);
  if (e.op != Edit::set || e.path.has_all())
    fail_usage(loopkit::format("malformed expectation {}: expected PATH=TEXT or PATH:=JSON", quoted(text)));
  return {e.path, e.operand};
}

}  // namespace loopkit
