// Event lines read directly: see core/log/event_line.hpp.
#include "core/log/event_line.hpp"

#include <algorithm>
#include <charconv>

#include "core/json/json_compact.hpp"
#include "core/json/json_members.hpp"
#include "sys/base/error.hpp"

namespace loopkit::event {

namespace {

// A value whose JSON text is what json::compact prints of it: a string
// without escapes, a literal name, an integer of at most 18 digits (no -0).
bool prints_as_written(std::string_view v) {
  switch (v.front()) {
    case '"': return v.find('\\') == std::string_view::npos;
    case 't':
    case 'f':
    case 'n': return true;
    default: break;
  }
  std::string_view digits = v.front() == '-' ? v.substr(1) : v;
  return !digits.empty() && digits.size() <= 18 && v != "-0" &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<int64_t> integer(std::string_view v) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

// a direct reading's value: a string's characters, else its JSON text
std::string_view unquoted(std::string_view v) { return v.front() == '"' ? v.substr(1, v.size() - 2) : v; }

bool is_bare(std::string_view s) {
  return !s.empty() && std::none_of(s.begin(), s.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\\' || c == 0x7f;
  });
}

}  // namespace

std::optional<EventLine> EventLine::read(std::string_view line) {
  if (line.empty() || line.front() != '{') return std::nullopt;
  static std::vector<JsonMemberSpan> spans;  // reused: one line at a time
  EventLine e;
  try {
    if (!read_json_members(line, "event", spans)) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  bool direct = true;
  e.members_.reserve(spans.size());
  for (const JsonMemberSpan& m : spans) {
    std::string_view key = m.name.substr(1, m.name.size() - 2);
    direct = direct && !m.escaped && prints_as_written(m.value) &&
             std::none_of(e.members_.begin(), e.members_.end(), [&](const Member& o) { return o.key == key; });
    if (!direct) break;
    e.members_.push_back({key, m.value});
  }
  if (!direct) {
    e.members_.clear();
    e.is_general_ = true;
    for (const JsonMemberSpan& m : spans) {
      std::string name = m.escaped ? *json_string_value(m.name) : std::string(m.name.substr(1, m.name.size() - 2));
      auto same = std::find_if(e.general_.begin(), e.general_.end(), [&](const Named& o) { return o.name == name; });
      if (same != e.general_.end()) same->value = m.value;  // json::object keeps the first place, the last value
      else e.general_.push_back({std::move(name), m.value});
    }
    const Named* seq = e.find_named("seq");
    std::optional<JsonInteger> n = seq ? json_integer(seq->value) : std::nullopt;
    if (!n) return std::nullopt;
    e.seq_ = n->is_unsigned ? static_cast<int64_t>(n->u) : n->i;
    return e;
  }
  auto seq = std::find_if(e.members_.begin(), e.members_.end(), [](const Member& m) { return m.key == "seq"; });
  std::optional<int64_t> n = seq == e.members_.end() ? std::nullopt : integer(seq->value);
  if (!n) return std::nullopt;
  e.seq_ = *n;
  return e;
}

const EventLine::Member* EventLine::find(std::string_view name) const {
  for (const Member& m : members_)
    if (m.key == name) return &m;
  return nullptr;
}

const EventLine::Named* EventLine::find_named(std::string_view name) const {
  for (const Named& m : general_)
    if (m.name == name) return &m;
  return nullptr;
}

std::string EventLine::member(std::string_view name) const {
  if (is_general_) {
    const Named* m = find_named(name);
    return m ? raw_json(m->value) : std::string();
  }
  const Member* m = find(name);
  return m ? std::string(unquoted(m->value)) : std::string();
}

std::string EventLine::text() const {
  if (is_general_) return general_text();
  std::string out;
  out.reserve(members_.size() * 24);
  for (std::string_view name : {"seq", "ts", "type", "session"}) {
    if (name != "seq") out += ' ';
    const Member* m = find(name);
    std::string_view v = m ? unquoted(m->value) : std::string_view();
    out += v.empty() ? "-" : v;
  }
  for (const Member& m : members_) {
    if (m.key == "seq" || m.key == "ts" || m.key == "type" || m.key == "session") continue;
    out += ' ';
    out += m.key;
    out += '=';
    std::string_view s = unquoted(m.value);
    // a literal without escapes is what json::quote makes of its text,
    // unless it holds a DEL, which quote escapes
    if (s.size() != m.value.size() && is_bare(s)) out += s;
    else if (s.size() == m.value.size() || s.find('\x7f') == std::string_view::npos) out += m.value;
    else append_json_string(out, s);
  }
  return out;
}

std::string EventLine::general_text() const {
  std::string out;
  for (std::string_view name : {"seq", "ts", "type", "session"}) {
    if (name != "seq") out += ' ';
    const Named* m = find_named(name);
    std::string v = m ? raw_json(m->value) : std::string();
    out += v.empty() ? "-" : v;
  }
  for (const Named& m : general_) {
    if (m.name == "seq" || m.name == "ts" || m.name == "type" || m.name == "session") continue;
    out += ' ';
    out += m.name;
    out += '=';
    if (m.value.front() != '"') {
      append_compact_json(out, m.value);
      continue;
    }
    std::string s = *json_string_value(m.value);
    if (is_bare(s)) out += s;
    else append_json_string(out, s);
  }
  return out;
}

}  // namespace loopkit::event
