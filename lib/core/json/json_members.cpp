// A lock record's members as JSON text (json_members.hpp): the record
// written back, strings quoted as json::quote quotes them, and a valid
// string literal decoded. The reader is json_members_read.cpp.
#include "core/json/json_members.hpp"

#include <charconv>
#include <cstring>

#include "sys/base/format.hpp"

namespace loopkit {

namespace {

constexpr uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
constexpr bool has_zero_byte(uint64_t v) { return ((v - ones) & ~v & highs) != 0; }

// the escape json::quote writes for a byte it escapes, appended
void append_escape(std::string& out, unsigned char c) {
  static constexpr char hex[] = "0123456789abcdef";
  char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
  std::size_t len = 2;
  switch (c) {
    case '"':
    case '\\': e[1] = static_cast<char>(c); break;
    case '\b': e[1] = 'b'; break;
    case '\f': e[1] = 'f'; break;
    case '\n': e[1] = 'n'; break;
    case '\r': e[1] = 'r'; break;
    case '\t': e[1] = 't'; break;
    default: len = 6;
  }
  out.append(e, len);
}

// Whether any of the 8 bytes of w is one to escape (< 0x20, '"', '\\',
// 0x7f): word-at-a-time tests, exact about whether there is one.
bool word_needs_escape(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, sizeof w);
  return ((w - ones * 0x20) & ~w & highs) != 0 || has_zero_byte(w ^ (ones * '"')) || has_zero_byte(w ^ (ones * '\\')) ||
         has_zero_byte(w ^ (ones * 0x7f));
}

}  // namespace

// the runs that need no escape appended whole
void append_json_string(std::string& out, std::string_view s) {
  out += '"';
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size();) {
    while (i + 8 <= s.size() && !word_needs_escape(s.data() + i)) i += 8;
    for (const std::size_t stop = std::min(s.size(), i + 8); i < stop; ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) continue;
      out.append(s, run, i - run);
      append_escape(out, c);
      run = i + 1;
    }
  }
  out.append(s, run);
  out += '"';
}

const std::string* JsonMembers::find(std::string_view name) const {
  for (const Member& m : members)
    if (m.name == name) return &m.text;
  return nullptr;
}

// a name twice keeps its first place and its last value (Boost.JSON's object)
void JsonMembers::add(std::string name, std::string text) {
  for (Member& m : members)
    if (m.name == name) {
      m.text = std::move(text);
      return;
    }
  members.push_back({std::move(name), std::move(text)});
}

void JsonMembers::set(std::string_view name, std::string text) { add(std::string(name), std::move(text)); }

void JsonMembers::set_string(std::string_view name, std::string_view s) {
  std::string text;
  append_json_string(text, s);
  set(name, std::move(text));
}

void JsonMembers::set_integer(std::string_view name, int64_t n) {
  char buf[24];
  set(name, std::string(buf, std::to_chars(buf, buf + sizeof buf, n).ptr));
}

// json::number_text's shortest round trip
void JsonMembers::set_number(std::string_view name, double d) { set(name, loopkit::format("{}", d)); }

void JsonMembers::erase(std::string_view name) {
  for (auto it = members.begin(); it != members.end(); ++it)
    if (it->name == name) {
      members.erase(it);
      return;
    }
}

std::string JsonMembers::string(std::string_view name) const {
  const std::string* t = find(name);
  if (!t) return "";
  return json_string_value(*t).value_or("");
}

std::string JsonMembers::json() const {
  std::string out;
  out.reserve(256);
  out += '{';
  for (const Member& m : members) {
    if (out.size() > 1) out += ',';
    append_json_string(out, m.name);
    out += ':';
    out += m.text;
  }
  out += '}';
  return out;
}

namespace {
int hex_digit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  return c - 'a' + 10;  // valid text: a hex digit
}
void append_utf8(std::string& out, unsigned cp) {
  if (cp < 0x80) out += static_cast<char>(cp);
  else if (cp < 0x800) out += static_cast<char>(0xC0 | cp >> 6), out += static_cast<char>(0x80 | (cp & 0x3F));
  else if (cp < 0x10000)
    out += static_cast<char>(0xE0 | cp >> 12), out += static_cast<char>(0x80 | (cp >> 6 & 0x3F)),
        out += static_cast<char>(0x80 | (cp & 0x3F));
  else
    out += static_cast<char>(0xF0 | cp >> 18), out += static_cast<char>(0x80 | (cp >> 12 & 0x3F)),
        out += static_cast<char>(0x80 | (cp >> 6 & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
}
unsigned hex4_of(std::string_view s, std::size_t i) {
  unsigned u = 0;
  for (std::size_t k = 0; k < 4; ++k)
    u = u << 4 | static_cast<unsigned>(hex_digit(static_cast<unsigned char>(s[i + k])));
  return u;
}
}  // namespace

std::optional<std::string> json_string_value(std::string_view text) {
  if (text.size() < 2 || text[0] != '"') return std::nullopt;
  std::string_view body = text.substr(1, text.size() - 2);
  if (body.find('\\') == std::string_view::npos) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\') {
      out += body[i];
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = hex4_of(body, i + 1);
        i += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {  // valid text: the low half follows
          cp = 0x10000 + ((cp - 0xd800) << 10) + (hex4_of(body, i + 3) - 0xdc00);
          i += 6;
        }
        append_utf8(out, cp);
        break;
      }
      default: out += e;  // '"', '\\', '/'
    }
  }
  return out;
}

}  // namespace loopkit
