// Reference semantics for the tests and fuzzers: a path looked up in a
// parsed document (Boost.JSON), as jq does, and an edit made on one. The
// tools look paths up and edit in scanned text (textedit::lookup and
// textedit::Plan in lib/core/edit/textedit.hpp, one walk for state-get and
// state-set); these are what that walk must agree with.
#pragma once
#include <vector>

#include "core/edit/assign.hpp"
#include "core/edit/edit_rules.hpp"
#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::reference {

// Every value the path names ([] expands); nullptr where a member or element
// is missing or a value on the way is null. Indexing into a string, number
// or boolean is exit 3.
inline std::vector<const json::value*> lookup(const json::value& doc, const Path& path) {
  std::vector<const json::value*> cur{&doc}, next;
  for (const auto& seg : path.segments) {
    next.clear();
    for (const json::value* v : cur) {
      if (!v || v->is_null()) {
        next.push_back(nullptr);
        continue;
      }
      switch (seg.kind) {
        case Segment::key:
          if (!v->is_object())
            fail_data(loopkit::format("{}: cannot look up {} in {}", path.text, json::quote(seg.name),
                                      with_article(type_name(*v))));
          next.push_back(v->get_object().if_contains(seg.name));
          break;
        case Segment::elem: {
          if (!v->is_array())
            fail_data(
                loopkit::format("{}: cannot index {} with [{}]", path.text, with_article(type_name(*v)), seg.index));
          const auto& a = v->get_array();
          long long n = static_cast<long long>(a.size());
          long long i = seg.index < 0 ? n + seg.index : seg.index;
          next.push_back(i >= 0 && i < n ? &a[static_cast<std::size_t>(i)] : nullptr);
          break;
        }
        case Segment::all:
          if (v->is_array()) {
            for (const auto& e : v->get_array()) next.push_back(&e);
          } else if (v->is_object()) {
            for (const auto& kv : v->get_object()) next.push_back(&kv.value());
          } else {
            fail_data(loopkit::format("{}: cannot list the elements of a {}", path.text, type_name(*v)));
          }
          break;
      }
    }
    std::swap(cur, next);
  }
  return cur;
}

// The value at a path as --expect and --require read it: missing, or
// through a scalar, reads as null.
inline const json::value* value_at(const json::value& doc, const Path& path) {
  static const json::value null_value;
  try {
    auto found = lookup(doc, path);
    return found.size() == 1 && found[0] ? found[0] : &null_value;
  } catch (const Error&) {
    return &null_value;
  }
}

// ---- edits --------------------------------------------------------------------

namespace edit_detail {
namespace rules = edit_rules;

// the slot the path names, creating what is missing on the way
inline json::value& slot(json::value& doc, const Path& p) {
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

inline void remove_at(json::value& doc, const Path& p) {
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

// jq's *: what `with` holds goes into v, objects in both merged in turn
inline void merge_into(json::value& v, const json::value& with) {
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

// One edit on a parsed document; missing objects on the way are created.
// Through a value of another type: exit 3; so is a sum that overflows.
// Deleting what is missing does nothing. Every tool edits text instead
// (textedit::Plan::edit_spans) with these semantics, and both take their
// rules, messages and the arithmetic of += from core/edit/edit_rules.hpp.
inline void edit_value(json::value& doc, const Edit& e) {
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
    case Edit::subtract:
    case Edit::multiply:
    case Edit::divide:
    case Edit::remainder:
      if (!json::is_numeric(v)) rules::cannot_compute(e.path, e.symbol(), type_name(v));
      v = rules::number_op(e.symbol(), v, e.operand, e.path);
      break;
    case Edit::alternative:
      if (v.is_null() || (v.is_bool() && !v.get_bool())) v = e.operand;
      break;
    case Edit::remove: break;
  }
}
}  // namespace edit_detail

using edit_detail::edit_value;

}  // namespace loopkit::reference
