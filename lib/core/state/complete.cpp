#include "core/state/complete.hpp"

#include <algorithm>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "core/state/state.hpp"
#include "sys/base/error.hpp"

namespace loopkit {

namespace {

// Where WORD's last segment starts: its '.' or '[' outside any quoted
// name, or 0 when it has one segment that begins bare.
std::size_t last_segment_start(std::string_view word) {
  std::size_t start = 0;
  each_unquoted(word, [&](std::size_t i, char c) {
    if (c == '.' || c == '[') start = i;
    return true;
  });
  return start;
}

// A member name that a bare segment (.name) spells as it is: jq's
// identifiers (letters, digits and '_', not starting with a digit), which
// state-get and state-set read back as one name whatever else their
// expressions and operators take (a '|', a '-', a space); any other name
// is offered as .["name"], as it must be typed.
bool bare_safe(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

std::string quoted_segment(std::string_view name) {
  std::string out = "[\"";
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "\"]";
}

// Adds the member names of V (or its indices: array set) not yet in KEYS.
void add_keys(const json::value& v, std::vector<std::string>& keys, bool& array) {
  auto add = [&keys](std::string key) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  };
  if (const auto* o = v.if_object()) {
    for (const auto& member : *o) add(std::string(member.key()));
  } else if (const auto* a = v.if_array()) {
    array = true;
    for (std::size_t i = 0; i < a->size(); ++i) add(std::to_string(i));
  }
}

// The member names of the object at PATH, or the indices of the array
// (array set); nothing for any other value. A path through "[]" has a value
// per item: their names together, each once, in the order first met.
std::vector<std::string> keys_at(const std::string& file, const std::string& path, bool& array) {
  Query q;
  q.file = file;
  q.must_exist = true;
  q.as_json = true;
  q.timeout = 1;  // an etcd URL: a TAB must not hang on an unreachable endpoint
  q.items.push_back({"", parse_path(path), std::nullopt});
  QueryResult r = query_state(q);
  std::vector<std::string> keys;
  if (!r.no.empty() || !r.missing.empty()) return keys;
  // one compact value a line (a newline in a string is written \n)
  std::string_view out = r.out;
  while (!out.empty()) {
    const std::size_t end = std::min(out.find('\n'), out.size());
    if (end > 0) add_keys(json::parse(out.substr(0, end), "the value to complete"), keys, array);
    out.remove_prefix(std::min(end + 1, out.size()));
  }
  return keys;
}

// Where the '=' of an assignment (PATH=TEXT, PATH:=JSON, ...) is in WORD,
// outside any quoted name, or npos.
std::size_t assignment_equals(std::string_view word) {
  std::size_t equals = std::string_view::npos;
  each_unquoted(word, [&](std::size_t i, char c) {
    if (c == '=') equals = i;
    return c != '=';
  });
  return equals;
}

// The values offered after an assignment's operator: a JSON literal after
// ":=" (the whole word, as typed up to the operator); nothing after "=",
// "+=" or "*=", whose TEXT, NUMBER or OBJECT no list can guess.
std::vector<std::string> complete_value(std::string_view word, std::size_t equals) {
  std::vector<std::string> out;
  if (equals == 0 || word[equals - 1] != ':') return out;
  const std::string_view typed = word.substr(equals + 1);
  for (std::string_view literal : {"true", "false", "null"})
    if (literal.substr(0, typed.size()) == typed)
      out.push_back(std::string(word.substr(0, equals + 1)) + std::string(literal));
  return out;
}

}  // namespace

std::vector<std::string> complete_path(const std::string& file, std::string_view word) {
  std::vector<std::string> out;
  if (auto equals = assignment_equals(word); equals != std::string_view::npos) return complete_value(word, equals);
  if (file == "-") return out;  // stdin belongs to the command, not to completion
  const std::size_t cut = last_segment_start(word);
  const std::string parent(word.substr(0, cut));
  const std::string_view tail = word.substr(cut);
  try {
    bool array = false;
    const std::vector<std::string> keys = keys_at(file, parent.empty() ? "." : parent, array);
    // the segment as begun: after a '.' typed, ".name", ".[3]" or
    // .["name"]; after a '[', [3] or ["name"]; a first segment typed bare
    // completes bare
    const bool bracket = !tail.empty() && tail[0] == '[';
    const std::string dot = !tail.empty() && tail[0] == '.' ? "." : "";
    for (const auto& key : keys) {
      std::string candidate = parent;
      if (array) candidate += dot + "[" + key + "]";
      else if (bracket) candidate += quoted_segment(key);
      else candidate += dot + (bare_safe(key) ? key : quoted_segment(key));
      // a name begun bare (.ke, ke) matches by the name: "key b" is offered
      // for .ke as .["key b"], the spelling it needs
      const bool matches = array || bracket ? std::string_view(candidate).substr(0, word.size()) == word
                                            : key.starts_with(tail.substr(dot.size()));
      if (matches) out.push_back(std::move(candidate));
    }
  } catch (const Error&) {
    // a malformed path, a missing or invalid file: nothing to offer
  }
  return out;
}

}  // namespace loopkit
