// Valid JSON text printed as the parsed value prints (json_compact.hpp):
// a walk over text already validated, so it only finds where things end.
#include "core/json/json_compact.hpp"

#include <charconv>
#include <vector>

#include "core/json/json.hpp"  // nearest_double only: json_number.cpp, no Boost.JSON code
#include "core/json/json_members.hpp"
#include "sys/base/format.hpp"

namespace loopkit {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::size_t skip_ws(std::string_view v, std::size_t p) {
  while (p < v.size() && is_ws(v[p])) ++p;
  return p;
}

std::size_t string_end(std::string_view v, std::size_t p) {
  for (++p; v[p] != '"'; ++p)
    if (v[p] == '\\') ++p;
  return p + 1;
}

// the end of the valid value at p
std::size_t value_end(std::string_view v, std::size_t p) {
  if (v[p] == '"') return string_end(v, p);
  if (v[p] != '{' && v[p] != '[') {
    while (p < v.size() && v[p] != ',' && v[p] != ']' && v[p] != '}' && !is_ws(v[p])) ++p;
    return p;
  }
  std::size_t depth = 0;
  for (;; ++p) {
    const char c = v[p];
    if (c == '"') p = string_end(v, p) - 1;
    else if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
  }
}

// the items of the container at v[0], each as its text (name, value)
template <class Each>
void for_items(std::string_view v, bool object, Each each) {
  std::size_t p = skip_ws(v, 1);
  if (v[p] == ']' || v[p] == '}') return;
  for (;;) {
    std::string_view name;
    if (object) {
      const std::size_t e = string_end(v, p);
      name = v.substr(p, e - p);
      p = skip_ws(v, skip_ws(v, e) + 1);  // past the colon
    }
    const std::size_t e = value_end(v, p);
    each(name, v.substr(p, e - p));
    p = skip_ws(v, e);
    if (v[p] != ',') return;
    p = skip_ws(v, p + 1);
  }
}

void append_string(std::string& out, std::string_view v) {
  // without escapes, the text is json::quote's unless it holds a DEL
  if (v.find('\\') == std::string_view::npos && v.find('\x7f') == std::string_view::npos) out += v;
  else append_json_string(out, *json_string_value(v));
}

void append_number(std::string& out, std::string_view v) {
  if (json_integer(v)) out += v == "-0" ? "0" : v;  // the one integer text that is not the shortest
  else out += loopkit::format("{}", json::nearest_double(v));
}

void append_object(std::string& out, std::string_view v) {
  struct Member {
    std::string name;
    std::string_view value;
  };
  std::vector<Member> members;
  for_items(v, true, [&](std::string_view name, std::string_view value) {
    std::string decoded = *json_string_value(name);
    for (Member& m : members)
      if (m.name == decoded) {
        m.value = value;  // json::object keeps the first place, the last value
        return;
      }
    members.push_back({std::move(decoded), value});
  });
  out += '{';
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (i > 0) out += ',';
    append_json_string(out, members[i].name);
    out += ':';
    append_compact_json(out, members[i].value);
  }
  out += '}';
}

}  // namespace

void append_compact_json(std::string& out, std::string_view v) {
  switch (v.front()) {
    case '"': append_string(out, v); return;
    case 't':
    case 'f':
    case 'n': out += v; return;
    case '{': append_object(out, v); return;
    case '[': {
      out += '[';
      bool first = true;
      for_items(v, false, [&](std::string_view, std::string_view item) {
        if (!first) out += ',';
        first = false;
        append_compact_json(out, item);
      });
      out += ']';
      return;
    }
    default: append_number(out, v);
  }
}

std::string compact_json(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_compact_json(out, text);
  return out;
}

std::string raw_json(std::string_view text) {
  if (text.front() == '"') return *json_string_value(text);
  return compact_json(text);
}

std::optional<JsonInteger> json_integer(std::string_view v) {
  if (v.empty() || v.find_first_of(".eE") != std::string_view::npos) return std::nullopt;
  if (v[0] != '-' && (v[0] < '0' || v[0] > '9')) return std::nullopt;
  JsonInteger n;
  const char* end = v.data() + v.size();
  auto r = std::from_chars(v.data(), end, n.i);
  if (r.ec == std::errc() && r.ptr == end) return n;
  if (v[0] == '-') return std::nullopt;
  r = std::from_chars(v.data(), end, n.u);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  n.is_unsigned = true;
  return n;
}

}  // namespace loopkit
