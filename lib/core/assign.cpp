#include "core/assign.hpp"

#include <fmt/format.h>

#include "sys/clock.hpp"
#include "sys/error.hpp"

namespace loopkit {

namespace {

json::value operand_json(std::string_view text, std::string_view whole) {
  try {
    return json::parse(text, "value");
  } catch (const Error& e) {
    std::string why = e.what();
    auto p = why.find("not valid JSON");
    fail_usage(fmt::format("malformed assignment {}: {}", quoted(whole),
                           p == std::string::npos ? why : why.substr(p)));
  }
}

json::value number_sum(const json::value& a, const json::value& b) {
  auto is_int = [](const json::value& v) { return v.is_int64() || v.is_uint64(); };
  if (is_int(a) && is_int(b)) {
    __int128 x = a.is_int64() ? a.get_int64() : static_cast<__int128>(a.get_uint64());
    __int128 y = b.is_int64() ? b.get_int64() : static_cast<__int128>(b.get_uint64());
    __int128 s = x + y;
    if (s >= INT64_MIN && s <= INT64_MAX) return static_cast<int64_t>(s);
    if (s >= 0 && s <= static_cast<__int128>(UINT64_MAX)) return static_cast<uint64_t>(s);
  }
  return a.to_number<double>() + b.to_number<double>();
}

std::string prefix_text(const Path& p, std::size_t upto) {
  std::string s;
  for (std::size_t i = 0; i < upto; ++i) {
    const auto& seg = p.segments[i];
    if (seg.kind == Segment::key) s += "." + seg.name;
    else if (seg.kind == Segment::elem) s += fmt::format("[{}]", seg.index);
    else s += "[]";
  }
  return s.empty() ? "." : s;
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
                              quoted(prefix_text(p, i))));
      cur = &cur->get_object()[seg.name];
    } else if (seg.kind == Segment::elem) {
      if (cur->is_null()) *cur = json::array();
      if (!cur->is_array())
        fail_data(fmt::format("{}: cannot index a {} at {}", p.text, type_name(*cur), quoted(prefix_text(p, i))));
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
      if (!cur->is_object())
        fail_data(fmt::format("{}: cannot delete through a {}", p.text, type_name(*cur)));
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

}  // namespace

Edit parse_assignment(std::string_view text) {
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
    e.operand = operand_json(rest, text);
    if (!e.operand.is_number())
      fail_usage(fmt::format("malformed assignment {}: += takes a number", quoted(text)));
    return e;
  } else if (!appending && starts("?:=")) {
    e.op = Edit::set_if_missing;
    json_value = true;
    rest.remove_prefix(3);
  } else if (!appending && starts("?=")) {
    e.op = Edit::set_if_missing;
    rest.remove_prefix(2);
  } else {
    fail_usage(fmt::format("malformed assignment {}: expected =, :=, +=, ?=, ?:=, []= or []:= after the path",
                           quoted(text)));
  }
  // a file holding invalid UTF-8 could never be read back
  if (!json_value && !json::is_utf8(rest))
    fail_usage(fmt::format("malformed assignment for {}: the text is not UTF-8", quoted(e.path.text)));
  e.operand = json_value ? operand_json(rest, text) : json::value(json::string(rest));
  return e;
}

Edit delete_edit(std::string_view path) {
  Edit e;
  e.op = Edit::remove;
  e.path = parse_path(path);
  if (e.path.has_all()) fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(path)));
  e.source = "--delete " + std::string(path);
  return e;
}

Edit now_edit(std::string_view path, bool epoch) {
  Edit e;
  e.op = Edit::set;
  e.path = parse_path(path);
  if (e.path.has_all()) fail_usage(fmt::format("malformed path {}: '[]' is for readers only", quoted(path)));
  e.operand = epoch ? json::value(now_epoch()) : json::value(json::string(iso8601_utc(now_epoch())));
  e.source = (epoch ? "--epoch " : "--now ") + std::string(path);
  return e;
}

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
      if (!v.is_number()) fail_data(fmt::format("{}: cannot add to a {}", e.path.text, type_name(v)));
      v = number_sum(v, e.operand);
      break;
    case Edit::append:
      if (v.is_null()) v = json::array();
      if (!v.is_array()) fail_data(fmt::format("{}: cannot append to a {}", e.path.text, type_name(v)));
      v.get_array().push_back(e.operand);
      break;
    case Edit::remove: break;
  }
}

const json::value* value_at(const json::value& doc, const Path& path) {
  static const json::value null_value;
  try {
    auto found = lookup(doc, path);
    return found.size() == 1 && found[0] ? found[0] : &null_value;
  } catch (const Error&) {
    return &null_value;  // through a scalar: nothing there
  }
}

std::pair<Path, json::value> parse_expectation(std::string_view text) {
  Edit e = parse_assignment(text);
  if (e.op != Edit::set || e.path.has_all())
    fail_usage(fmt::format("malformed expectation {}: expected PATH=TEXT or PATH:=JSON", quoted(text)));
  return {e.path, e.operand};
}

}  // namespace loopkit
