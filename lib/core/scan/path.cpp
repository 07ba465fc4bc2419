#include "core/scan/path.hpp"

#include <algorithm>

#include "core/json/json_members.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit {

bool ends_bare_name(char c) {
  switch (c) {
    case '.':
    case '[':
    case ']':
    case '=':
    case ':':
    case '+':
    case '?':
    case '!':
    case '*':
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '\f':
    case '\v': return true;
    default: return false;
  }
}

namespace {

// the --arg variables of this run (a tool's paths are parsed once, up front)
std::vector<std::pair<std::string, std::string>>& path_variables() {
  static std::vector<std::pair<std::string, std::string>> vars;
  return vars;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

struct Cursor {
  std::string_view t;
  std::size_t i = 0;
  bool at_end() const { return i >= t.size(); }
  char peek() const { return at_end() ? '\0' : t[i]; }
};

// the path as a terminal can show it: bytes that are not UTF-8 as \xFF
std::string printable(std::string_view text) {
  if (json::is_utf8(text)) return std::string(text);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // a valid sequence is kept whole; a stray byte is escaped
    std::size_t n = 1;
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0xC0) n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (c >= 0x80 && (c < 0xC0 || !json::is_utf8(text.substr(i, n)))) {
      out += loopkit::format("\\x{:02X}", c);
      continue;
    }
    out.append(text.substr(i, n));
    i += n - 1;
  }
  return out;
}

[[noreturn]] void malformed(std::string_view text, std::string_view why) {
  fail_usage(loopkit::format("malformed path {}: {}", quoted(printable(text)), why));
}

// A member name the file could not read back is refused here, where the
// caller's text enters.
std::string utf8_name(const Cursor& c, std::string_view name) {
  if (!json::is_utf8(name)) malformed(c.t, "a member name is not UTF-8");
  return std::string(name);
}

// a JSON string literal starting at c.i
std::string quoted_key(Cursor& c) {
  std::size_t start = c.i++;
  while (!c.at_end() && c.peek() != '"') c.i += c.peek() == '\\' ? 2 : 1;
  if (c.at_end()) malformed(c.t, "unterminated string");
  ++c.i;
  std::string_view lit = c.t.substr(start, c.i - start);
  if (lit.find('\\') == std::string_view::npos) return utf8_name(c, lit.substr(1, lit.size() - 2));
  // validated as json::parse would (bad escapes, lone surrogates such as
  // \ud800, bytes that are not UTF-8), without Boost.JSON in the tools
  // that only read paths
  std::vector<JsonMemberSpan> none;
  try {
    read_json_members(lit, "path", none);
  } catch (const Error&) {
    malformed(c.t, "bad escape or text that is not UTF-8 in a quoted name");
  }
  return *json_string_value(lit);
}

void bracket(Cursor& c, Path& out) {
  ++c.i;  // '['
  if (c.peek() == ']') {
    ++c.i;
    out.segments.push_back({Segment::all, {}, 0});
    return;
  }
  if (c.peek() == '"') {
    std::string name = quoted_key(c);
    if (c.peek() != ']') malformed(c.t, "expected ']' after a quoted name");
    ++c.i;
    out.segments.push_back({Segment::key, std::move(name), 0});
    return;
  }
  if (c.peek() == '$') {
    std::size_t start = ++c.i;
    while (!c.at_end() && is_name_char(c.peek())) ++c.i;
    std::string_view name = c.t.substr(start, c.i - start);
    if (name.empty() || !is_name_start(name[0])) malformed(c.t, "expected a variable name after '$'");
    if (c.peek() != ']') malformed(c.t, "expected ']' after a variable");
    ++c.i;
    const auto& vars = path_variables();
    auto it = std::find_if(vars.rbegin(), vars.rend(), [&](const auto& v) { return v.first == name; });
    if (it == vars.rend())
      malformed(c.t, loopkit::format("undefined variable '${}' (define it with --arg {} VALUE)", name, name));
    out.segments.push_back({Segment::key, it->second, 0});
    return;
  }
  bool negative = c.peek() == '-';
  if (negative) ++c.i;
  if (c.peek() < '0' || c.peek() > '9') malformed(c.t, "expected an index, a quoted name or ']' after '['");
  long long v = 0;
  while (c.peek() >= '0' && c.peek() <= '9') {
    if (v > 1'000'000'000'000'000LL) malformed(c.t, "index too large");
    v = v * 10 + (c.peek() - '0');
    ++c.i;
  }
  if (c.peek() != ']') malformed(c.t, "expected ']'");
  ++c.i;
  out.segments.push_back({Segment::elem, {}, negative ? -v : v});
}

// one segment after an optional dot; false when nothing could be read
bool segment(Cursor& c, Path& out) {
  char ch = c.peek();
  if (ch == '[') {
    bracket(c, out);
    return true;
  }
  if (ch == '"') {
    out.segments.push_back({Segment::key, quoted_key(c), 0});
    return true;
  }
  std::size_t start = c.i;
  while (!c.at_end() && !ends_bare_name(c.peek())) ++c.i;
  if (c.i == start) return false;
  out.segments.push_back({Segment::key, utf8_name(c, c.t.substr(start, c.i - start)), 0});
  return true;
}

// No document is deeper than the readers' limit, so no path need be: checked
// as segments are read, a path of a million is refused after the first 1001.
void check_depth(std::string_view text, const Path& p) {
  if (p.segments.size() > json::max_depth)
    malformed(text.substr(0, std::min<std::size_t>(text.size(), 40)),
              loopkit::format("deeper than {} levels", json::max_depth));
}

}  // namespace

bool Path::has_all() const {
  for (const auto& s : segments)
    if (s.kind == Segment::all) return true;
  return false;
}

std::string Path::last_name() const {
  for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
    if (it->kind == Segment::key) return it->name;
    if (it->kind == Segment::elem) return "";
  }
  return "";
}

std::size_t parse_path_prefix(std::string_view text, Path& out) {
  out = Path{};
  Cursor c{text};
  if (c.peek() == '.') {
    ++c.i;
    // "." alone is the whole document
    if (c.at_end() || (ends_bare_name(c.peek()) && c.peek() != '[')) {
      out.text = std::string(text.substr(0, c.i));
      return c.i;
    }
    if (!segment(c, out)) malformed(text, "expected a name after '.'");
  } else if (!segment(c, out)) {
    return 0;
  }
  while (!c.at_end()) {
    check_depth(text, out);
    if (c.peek() == '[') {
      bracket(c, out);
    } else if (c.peek() == '.') {
      ++c.i;
      if (!segment(c, out)) malformed(text, "expected a name after '.'");
    } else {
      break;
    }
  }
  check_depth(text, out);
  out.text = std::string(text.substr(0, c.i));
  return c.i;
}

std::optional<std::string> path_variable(std::string_view name) {
  const auto& vars = path_variables();
  auto it = std::find_if(vars.rbegin(), vars.rend(), [&](const auto& v) { return v.first == name; });
  if (it == vars.rend()) return std::nullopt;
  return it->second;
}

void define_path_variable(const std::string& name, const std::string& value) {
  if (name.empty() || !is_name_start(name[0]) ||
      !std::all_of(name.begin(), name.end(), [](char c) { return is_name_char(c); }))
    fail_usage(loopkit::format("--arg: not a variable name: {}", quoted(printable(name))));
  if (!json::is_utf8(value)) fail_usage(loopkit::format("--arg {}: the value is not UTF-8", name));
  path_variables().emplace_back(name, value);
}

Path parse_path(std::string_view text) {
  if (text.empty()) malformed(text, "empty");
  Path p;
  std::size_t n = parse_path_prefix(text, p);
  if (n == 0) malformed(text, loopkit::format("unexpected {}", quoted(text.substr(0, 1))));
  if (n != text.size()) malformed(text, loopkit::format("unexpected {}", quoted(text.substr(n, 1))));
  return p;
}

const char* type_name(const json::value& v) {
  if (json::is_number_literal(v)) return "number";
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "boolean";
    case boost::json::kind::string: return "string";
    case boost::json::kind::array: return "array";
    case boost::json::kind::object: return "object";
    default: return "number";
  }
}

const char* text_type_name(char c) {
  switch (c) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't':
    case 'f': return "boolean";
    case 'n': return "null";
    default: return "number";
  }
}

const char* with_article(const char* type) {
  std::string_view t = type;
  if (t == "array") return "an array";
  if (t == "object") return "an object";
  if (t == "null") return "null";
  if (t == "string") return "a string";
  if (t == "boolean") return "a boolean";
  return "a number";
}

std::string path_prefix_text(const Path& p, std::size_t upto) {
  std::string s;
  for (std::size_t i = 0; i < upto; ++i) {
    const auto& seg = p.segments[i];
    // a name a bare path could not spell ("", "a b", "x.y") is quoted
    bool bare = !seg.name.empty() && seg.name[0] != '"' &&
                std::none_of(seg.name.begin(), seg.name.end(), [](char c) { return ends_bare_name(c); });
    if (seg.kind == Segment::key) s += bare ? "." + seg.name : "[" + json::quote(seg.name) + "]";
    else if (seg.kind == Segment::elem) s += loopkit::format("[{}]", seg.index);
    else s += "[]";
  }
  return s.empty() ? "." : s;
}

}  // namespace loopkit
