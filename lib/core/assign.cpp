#include "core/assign.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sys/clock.hpp"
#include "sys/error.hpp"

namespace loopkit {

namespace {

json::value operand_json(std::string_view text, std::string_view whole, json::Literals keep) {
  try {
    return json::parse(text, "value", {}, keep);
  } catch (const Error& e) {
    std::string why = e.what();
    auto p = why.find("not valid JSON");
    fail_usage(fmt::format("malformed assignment {}: {}", quoted(whole), p == std::string::npos ? why : why.substr(p)));
  }
}

// A number as the sum needs it: exact integers up to 37 digits (so that two
// of them add without overflow in 128 bits), else a double.
struct Number {
  bool integral = false;
  __int128 i = 0;
  double d = 0;
};

Number number_of(const json::value& v) {
  Number n;
  if (v.is_int64()) n.integral = true, n.i = v.get_int64();
  else if (v.is_uint64()) n.integral = true, n.i = v.get_uint64();
  else if (v.is_double()) n.d = v.get_double();
  else {
    std::string t(json::literal_text(v));
    bool negative = !t.empty() && t[0] == '-';
    std::string_view digits = std::string_view(t).substr(negative ? 1 : 0);
    if (digits.size() <= 37 && digits.find_first_not_of("0123456789") == std::string_view::npos) {
      n.integral = true;
      for (char c : digits) n.i = n.i * 10 + (c - '0');
      if (negative) n.i = -n.i;
    } else {
      n.d = std::strtod(t.c_str(), nullptr);  // finite: the parser checked the literal
    }
  }
  if (!n.integral) return n;
  n.d = static_cast<double>(n.i);
  return n;
}

std::string int128_text(__int128 v) {
  bool negative = v < 0;
  unsigned __int128 u = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  do {
    s += static_cast<char>('0' + static_cast<int>(u % 10));
    u /= 10;
  } while (u);
  if (negative) s += '-';
  return {s.rbegin(), s.rend()};
}

json::value number_sum(const json::value& a, const json::value& b, const Path& where) {
  Number x = number_of(a), y = number_of(b);
  if (x.integral && y.integral) {
    __int128 s = x.i + y.i;
    if (s >= INT64_MIN && s <= INT64_MAX) return static_cast<int64_t>(s);
    if (s >= 0 && s <= static_cast<__int128>(UINT64_MAX)) return static_cast<uint64_t>(s);
    return json::number_literal(int128_text(s));  // exact, as jq 1.7 keeps big literals
  }
  double s = x.d + y.d;
  if (!std::isfinite(s)) fail_data(fmt::format("{}: the sum overflows a double", where.text));
  return s;
}

// the slot the path names, creating what is missing on the way
json::value& slot(json::value& doc, const Path& p) {
  json::value* cur = &doc;
  for (std::size_t i = 0; i < p.segments.size(); ++i) {
    const auto& seg = p.segments[i];
    if (seg.kind == Segment::key) {
      if (cur->is_null()) *cur = json::object();
      if (!cur->is_object())
        fail_data(fmt::format("{}: cannot set {} in a {} at {}", p.text, json::quote(seg.name), type_name(*cur),
                              quoted(path_prefix_text(p, i))));
      cur = &cur->get_object()[seg.name];
    } else if (seg.kind == Segment::elem) {
      if (cur->is_null()) *cur = json::array();
      if (!cur->is_array())
        fail_data(fmt::format("{}: cannot index a {} at {}", p.text, type_name(*cur), quoted(path_prefix_text(p, i))));
      auto& a = cur->get_array();
      long long n = static_cast<long long>(a.size());
      long long idx = seg.index < 0 ? n + seg.index : seg.index;
      if (idx < 0 || idx > n)
        fail_data(fmt::format("{}: index {} is out of range for an array of {}", p.text, seg.index, n));
      if (idx == n) a.emplace_back(nullptr);
      cur = &a[static_cast<std::size_t>(idx)];
    } else {
      fail_usage(fmt::format("malformed path {}: '[]' names many values; it is for readers only", quoted(p.text)));
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
      if (!cur->is_object()) fail_data(fmt::format("{}: cannot delete through a {}", p.text, type_name(*cur)));
      cur = cur->get_object().if_contains(seg.name);
      if (!cur) return;
    } else if (seg.kind == Segment::elem) {
      if (!cur->is_array()) fail_data(fmt::format("{}: cannot delete through a {}", p.text, type_name(*cur)));
      auto& a = cur->get_array();
      long long n = static_cast<long long>(a.size());
      long long idx = seg.index < 0 ? n + seg.index : seg.index;
      if (idx < 0 || idx >= n) return;
      cur = &a[static_cast<std::size_t>(idx)];
    } else {
      fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(p.text)));
    }
  }
  const auto& last = p.segments.back();
  if (cur->is_null()) return;
  if (last.kind == Segment::key) {
    if (!cur->is_object()) fail_data(fmt::format("{}: cannot delete a member of a {}", p.text, type_name(*cur)));
    cur->get_object().erase(last.name);
  } else if (last.kind == Segment::elem) {
    if (!cur->is_array()) fail_data(fmt::format("{}: cannot delete an element of a {}", p.text, type_name(*cur)));
    auto& a = cur->get_array();
    long long n = static_cast<long long>(a.size());
    long long idx = last.index < 0 ? n + last.index : last.index;
    if (idx >= 0 && idx < n) a.erase(a.begin() + idx);
  } else {
    fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(p.text)));
  }
}

Edit parse_assignment_keeping(std::string_view text, json::Literals keep) {
  Edit e;
  e.source = std::string(text);
  std::size_t n = parse_path_prefix(text, e.path);
  if (n == 0) fail_usage(fmt::format("malformed assignment {}: no path before the operator", quoted(text)));
  std::string_view rest = text.substr(n);
  bool appending = !e.path.segments.empty() && e.path.segments.back().kind == Segment::all;
  if (appending) e.path.segments.pop_back();
  for (const auto& s : e.path.segments)
    if (s.kind == Segment::all)
      fail_usage(fmt::format("malformed assignment {}: '[]' may only end the path", quoted(text)));

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
      fail_usage(fmt::format("malformed assignment {}: += takes a number", quoted(text)));
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
    fail_usage(fmt::format("malformed assignment {}: expected =, :=, +=, ?=, ?:=, *=, []= or []:= after the path",
                           quoted(text)));
  }
  // a file holding invalid UTF-8 could never be read back
  if (!json_value && !json::is_utf8(rest))
    fail_usage(fmt::format("malformed assignment for {}: the text is not UTF-8", quoted(e.path.text)));
  e.operand = json_value ? operand_json(rest, text, keep) : json::value(json::string(rest));
  if (e.op == Edit::merge && !e.operand.is_object())
    fail_usage(fmt::format("malformed assignment {}: *= takes a JSON object", quoted(text)));
  // the value lies inside one container per segment (and the array it joins)
  std::size_t depth = e.path.segments.size() + (appending ? 1 : 0) + json::depth(e.operand);
  if (depth > json::max_depth)
    fail_usage(fmt::format("malformed assignment {}: the value would lie {} levels deep; readers stop at {}",
                           quoted(text.substr(0, std::min<std::size_t>(text.size(), 40))), depth, json::max_depth));
  return e;
}

}  // namespace

Edit parse_assignment(std::string_view text) { return parse_assignment_keeping(text, json::Literals::as_written); }

Edit delete_edit(std::string_view path) {
  Edit e;
  e.op = Edit::remove;
  e.path = parse_path(path);
  if (e.path.has_all()) fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(path)));
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
  if (e.path.has_all()) fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(path)));
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
      if (!json::is_numeric(v)) fail_data(fmt::format("{}: cannot add to a {}", e.path.text, type_name(v)));
      v = number_sum(v, e.operand, e.path);
      break;
    case Edit::append:
      if (v.is_null()) v = json::array();
      if (!v.is_array()) fail_data(fmt::format("{}: cannot append to a {}", e.path.text, type_name(v)));
      v.get_array().push_back(e.operand);
      break;
    case Edit::merge:
      if (!v.is_null() && !v.is_object())
        fail_data(fmt::format("{}: cannot merge into a {}", e.path.text, type_name(v)));
      merge_into(v, e.operand);
      break;
    case Edit::remove: break;
  }
}

std::pair<Path, json::value> parse_expectation(std::string_view text) {
  // compared as a reader reads the file: 1.0 is 1, a big integer its digits
  Edit e = parse_assignment_keeping(text, json::Literals::big_integers);
  if (e.op != Edit::set || e.path.has_all())
    fail_usage(fmt::format("malformed expectation {}: expected PATH=TEXT or PATH:=JSON", quoted(text)));
  return {e.path, e.operand};
}

}  // namespace loopkit
