// Event lines read directly: see core/event_line.hpp.
#include "core/event_line.hpp"

#include <algorithm>
#include <charconv>

#include "core/event.hpp"
#include "core/scan.hpp"
#include "sys/error.hpp"

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

std::optional<json::object> parse_general(std::string_view line) {
  json::value v = json::parse(line, "event");
  if (!v.is_object()) return std::nullopt;
  auto& o = v.get_object();
  const json::value* seq = o.if_contains("seq");
  if (!seq || !(seq->is_int64() || seq->is_uint64())) return std::nullopt;
  return std::move(o);
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
  static const scan::Want every = [] {
    scan::Want w;
    w.all = true;
    return w;
  }();
  EventLine e;
  try {
    scan::Node root = scan::scan(line, every, "event");
    bool direct = true;
    e.members_.reserve(root.children.size());
    for (const scan::Child& c : root.children) {
      std::string_view key = line.substr(c.item.key, scan::string_end(line, c.item.key) - c.item.key);
      std::string_view value = line.substr(c.item.value, c.item.end - c.item.value);
      key = key.substr(1, key.size() - 2);
      direct = direct && key.find('\\') == std::string_view::npos && prints_as_written(value) &&
               std::none_of(e.members_.begin(), e.members_.end(), [&](const Member& m) { return m.key == key; });
      e.members_.push_back({key, value});
    }
    if (!direct) {
      e.members_.clear();
      e.general_ = parse_general(line);
      if (!e.general_) return std::nullopt;
      const json::value& s = e.general_->at("seq");
      e.seq_ = s.is_int64() ? s.get_int64() : static_cast<int64_t>(s.get_uint64());
      return e;
    }
  } catch (const Error&) {
    return std::nullopt;
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

std::string EventLine::member(std::string_view name) const {
  if (general_) {
    const json::value* v = general_->if_contains(name);
    return v ? json::raw_text(*v) : std::string();
  }
  const Member* m = find(name);
  return m ? std::string(unquoted(m->value)) : std::string();
}

std::string EventLine::text() const {
  if (general_) return text_of(*general_);
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
    if (s.size() == m.value.size() || !is_bare(s))
      out += s.size() == m.value.size() || s.find('\x7f') == std::string_view::npos ? m.value : json::quote(s);
    else out += s;
  }
  return out;
}

}  // namespace loopkit::event
