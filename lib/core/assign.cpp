#include "core/assign.hpp"

#include "core/edit_rules.hpp"
#include "sys/format.hpp"

#include "sys/clock.hpp"
#include "sys/error.hpp"

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

// the slot the path names, creating what is missing on the way
json::value& slot(json::value& doc, const Path& p) {
  json::value* cur = &doc;
  for (std::size_t i = 0; i < p.segments.size(); ++i) {
    const auto& seg = p.segments[i];
    if (seg.kind == Segment::key) {
      if (cur->is_null()) *cur = json::object();
      if (!cur->is_object()) rules::cannot_set_member(p, i, type_name(*cur));
      cur = &cur->get_object()[seg.name];
    } else if (seg.kind == Segment::elem) {
      if (cur->is_null()) *cur = json::array();
      if (!cur->is_array()) rules::cannot_index(p, i, type_name(*cur));
      auto& a = cur->get_array();
      auto idx = rules::landing(seg.index, a.size(), true);
      if (!idx) rules::index_out_of_range(p, seg.index, a.size());
      if (*idx == a.size()) a.emplace_back(nullptr);
      cur = &a[*idx];
    } else {
      rules::all_names_many(p);
    }
  }
  return *cur;
}

void remove_at(json::value& doc, const Path& p) {
  if (p.segments.empty()) {
    doc = json::object();
    return;
  }
  json::value* cur = &doc;
  for (std::size_t i = 0; i + 1 < p.segments.size(); ++i) {
    const auto& seg = p.segments[i];
    if (cur->is_null()) return;
    if (seg.kind == Segment::key) {
      if (!cur->is_object()) rules::cannot_delete_through(p, type_name(*cur));
      cur = cur->get_object().if_contains(seg.name);
      if (!cur) return;
    } else if (seg.kind == Segment::elem) {
      if (!cur->is_array()) rules::cannot_delete_through(p, type_name(*cur));
      auto& a = cur->get_array();
      auto idx = rules::landing(seg.index, a.size(), false);
      if (!idx) return;
      cur = &a[*idx];
    } else {
      rules::all_names_many(p);
    }
  }
  const auto& last = p.segments.back();
  if (cur->is_null()) return;
  if (last.kind == Segment::key) {
    if (!cur->is_object()) rules::cannot_delete_in(p, type_name(*cur));
    cur->get_object().erase(last.name);
  } else if (last.kind == Segment::elem) {
    if (!cur->is_array()) rules::cannot_delete_in(p, type_name(*cur));
    auto& a = cur->get_array();
    if (auto idx = rules::landing(last.index, a.size(), false)) a.erase(a.begin() + static_cast<std::ptrdiff_t>(*idx));
  } else {
    rules::all_names_many(p);
  }
}

Edit parse_assignment_keeping(std::string_view text, json::Literals keep) {
  Edit e;
  e.source = std::string(text);
  std::size_t n = parse_path_prefix(text, e.path);
  if (n == 0) fail_usage(loopkit::format("malformed assignment {}: no path before the operator", quoted(text)));
  std::string_view rest = text.substr(n);
  bool appending = !e.path.segments.empty() && e.path.segments.back().kind == Segment::all;
  if (appending) e.path.segments.pop_back();
  for (const auto& s : e.path.segments)
    if (s.kind == Segment::all)
      fail_usage(loopkit::format("malformed assignment {}: '[]' may only end the path", quoted(text)));

  auto starts = [&](std::string_view op) { return rest.substr(0, op.size()) == op; };
  bool json_value = false;
  if (starts(":=")) {
    e.op = appending ? Edit::append : Edit::set;
    json_value = true;
    rest.remove_prefix(2);
  } else if (starts("=")) {
    e.op = appending ? Edit::append : Edit::set;
    rest.remove_prefix(1);
  } else if (!appending && starts("+=")) {
    e.op = Edit::add;
    rest.remove_prefix(2);
    e.operand = operand_json(rest, text, keep);
    if (!json::is_numeric(e.operand))
      fail_usage(loopkit::format("malformed assignment {}: += takes a number", quoted(text)));
    return e;
  } else if (!appending && starts("*=")) {
    e.op = Edit::merge;
    json_value = true;
    rest.remove_prefix(2);
  } else if (!appending && starts("?:=")) {
    e.op = Edit::set_if_missing;
    json_value = true;
    rest.remove_prefix(3);
  } else if (!appending && starts("?=")) {
    e.op = Edit::set_if_missing;
    rest.remove_prefix(2);
  } else {
    fail_usage(loopkit::format("malformed assignment {}: expected =, :=, +=, ?=, ?:=, *=, []= or []:= after the path",
                               quoted(text)));
  }
  // a file holding invalid UTF-8 could never be read back
  if (!json_value && !json::is_utf8(rest))
    fail_usage(loopkit::format("malformed assignment for {}: the text is not UTF-8", quoted(e.path.text)));
  e.operand = json_value ? operand_json(rest, text, keep) : json::value(json::string(rest));
  if (e.op == Edit::merge && !e.operand.is_object())
    fail_usage(loopkit::format("malformed assignment {}: *= takes a JSON object", quoted(text)));
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

namespace {
// jq's *: what `with` holds goes into v, objects in both merged in turn
void merge_into(json::value& v, const json::value& with) {
  if (!v.is_object() || !with.is_object()) {
    v = with;
    return;
  }
  for (const auto& [name, value] : with.get_object()) {
    json::value* have = v.get_object().if_contains(name);
    if (have) merge_into(*have, value);
    else v.get_object()[name] = value;
  }
}
}  // namespace

void apply(json::value& doc, const Edit& e) {
  if (e.op == Edit::remove) {
    remove_at(doc, e.path);
    return;
  }
  json::value& v = slot(doc, e.path);
  switch (e.op) {
    case Edit::set: v = e.operand; break;
    case Edit::set_if_missing:
      if (v.is_null()) v = e.operand;
      break;
    case Edit::add:
      if (v.is_null()) v = 0;
      if (!json::is_numeric(v)) rules::cannot_change(e.path, "add to", type_name(v));
      v = rules::number_sum(v, e.operand, e.path);
      break;
    case Edit::append:
      if (v.is_null()) v = json::array();
      if (!v.is_array()) rules::cannot_change(e.path, "append to", type_name(v));
      v.get_array().push_back(e.operand);
      break;
    case Edit::merge:
      if (!v.is_null() && !v.is_object()) rules::cannot_change(e.path, "merge into", type_name(v));
      merge_into(v, e.operand);
      break;
    case Edit::remove: break;
  }
}

std::pair<Path, json::value> parse_expectation(std::string_view text) {
  // compared as a reader reads the file: 1.0 is 1, a big integer its digits
  Edit e = parse_assignment_keeping(text, json::Literals::big_integers);
  if (e.op != Edit::set || e.path.has_all())
    fail_usage(loopkit::format("malformed expectation {}: expected PATH=TEXT or PATH:=JSON", quoted(text)));
  return {e.path, e.operand};
}

}  // namespace loopkit
