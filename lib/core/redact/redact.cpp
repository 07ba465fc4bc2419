// The redactor: one pass over each string, trying at each position the
// matchers of core/redact/redact_match.hpp, and the walk over a document that
// hides every value under a secret name.
#include "core/redact/redact.hpp"

#include "core/redact/redact_match.hpp"
#include "sys/base/error.hpp"

namespace loopkit {

namespace {

using namespace redact_detail;

struct Found {
  Span span;
  std::string kind;
};

// The secret that starts at i (or whose value follows the name that ends
// there); span.end 0 for none. word_start: i may start a key or a token.
Found secret_at(std::string_view v, std::size_t i, bool word_start) {
  const char c = v[i];
  if (c == '-') {
    if (std::size_t e = match_private_key(v, i)) return {{i, e}, "private key block"};
    if (Span o = match_command_option(v, i); o.end) return {o, "password on a command line"};
  } else if (c == '=' || c == ':') {
    // the name first: "password://u:p@h" is all the password's, and a second pass agrees
    if (Assignment a = match_assignment(v, i); a.value.end) return {a.value, "value of " + quoted(a.key)};
    if (Span u = match_url_password(v, i); u.end) return {u, "password in a URL"};
  } else if (c == '>') {
    if (Assignment a = match_element(v, i); a.value.end) return {a.value, "value of " + quoted(a.key)};
  } else if (c == '\'' || c == '"') {
    if (Assignment a = match_sql_password(v, i); a.value.end) return {a.value, "value of " + quoted(a.key)};
  }
  if (!word_start) return {};
  if (TokenMatch m = match_token(v, i); m.span.end) return {m.span, m.kind};
  if (c == 'B' || c == 'b') {
    if (Span t = match_bearer(v, i); t.end) return {t, "bearer token"};
  } else if (c == 'e') {
    if (std::size_t e = match_jwt(v, i)) return {{i, e}, "JSON web token"};
  }
  return {};
}

// One pass over v: the count of secrets found, and then out holds the
// redacted text (nothing is copied when there is none, as in nearly every
// string).
std::size_t redact_pass(std::string_view v, std::string& out, const std::function<void(const std::string&)>& on_kind) {
  std::size_t count = 0, i = 0, copied = 0;
  while (i < v.size()) {
    // Keys start a word: "sk-" inside "task-sk-..." or "x_ghp_..." is not one,
    // and no start inside a run is tried again (linear time on any input).
    // Right after a replacement is a start, as it is in the redacted text:
    // a second pass finds nothing the first left.
    const bool word_start = i == 0 || !is_word(v[i - 1]) || (count && i == copied);
    const char c = v[i];
    if (!word_start && c != '-' && c != '=' && c != ':' && c != '>' && c != '\'' && c != '"') {
      ++i;  // inside a word: most of any text, and nothing starts there
      continue;
    }
    Found f = secret_at(v, i, word_start);
    if (!f.span.end) {
      ++i;
      continue;
    }
    out.append(v.substr(copied, f.span.begin - copied));
    out += redacted_marker;
    copied = i = f.span.end;
    ++count;
    if (on_kind) on_kind(f.kind);
  }
  if (count) out.append(v.substr(copied));
  return count;
}

// One pass can leave what the next finds: in "curl -uU:name_key=P" the
// option's password goes first, and then the name's value is seen whole.
// So passes run until one finds nothing (one pass on text without secrets):
// a redacted text holds nothing more to redact. No matcher takes a marker
// alone for a secret, so each pass that finds something changes the text;
// the bound is a guard all the same.
// s is read as text, and replaced only when a pass finds something.
std::size_t redact_text(std::string_view text, std::string& s, const std::function<void(const std::string&)>& on_kind) {
  std::size_t total = 0;
  std::string_view v = text;
  for (int pass = 0; pass < 8; ++pass) {
    std::string out;
    const std::size_t n = redact_pass(v, out, on_kind);
    if (!n) break;
    total += n;
    s = std::move(out);
    v = s;
  }
  return total;
}

// .name where the path syntax allows it, else ["name"]
std::string member_path(std::string_view parent, std::string_view name) {
  bool bare = !name.empty() && name[0] != '"';
  for (char c : name)
    if (c == '.' || c == '[' || c == ']' || c == '=' || c == ':' || c == '+' || c == '?' || c == '!' ||
        static_cast<unsigned char>(c) <= ' ')
      bare = false;
  std::string p(parent == "." ? "" : parent);
  if (bare) return p + "." + std::string(name);
  return p + "[" + json::quote(name) + "]";
}

std::string element_path(std::string_view parent, std::size_t i) {
  return (parent == "." ? "" : std::string(parent)) + "[" + std::to_string(i) + "]";
}

// A value's place in the document, made a path only for a redaction's
// report: most walks redact nothing, and building every member's path was
// most of their cost.
struct Place {
  const Place* parent = nullptr;
  std::string_view name;  // the root's path, or a member's name
  std::size_t index = 0;  // an element's index
  bool element = false;
  std::string path() const {
    if (!parent) return std::string(name);
    return element ? element_path(parent->path(), index) : member_path(parent->path(), name);
  }
  Place member(std::string_view key) const { return {this, key, 0, false}; }
  Place item(std::size_t i) const { return {this, {}, i, true}; }
};

// Everything under a secret name goes, however deep: each string and number
// becomes the marker, while members and array lengths stay, so that a reader
// expecting an object still finds one. true, false, null and "" carry
// nothing worth hiding; a number under a "...token" name is a count
// (max_token: 4096), not a token.
std::size_t redact_under(json::value& v, std::string_view name, std::string_view suffix, const Place& here,
                         const OnRedact& on) {
  bool hide = false;
  if (v.is_string()) {
    const auto& js = v.get_string();
    hide = secret_value(suffix, std::string_view(js.data(), js.size()));
  } else if (v.is_number()) {
    hide = suffix != "token";
  }
  if (hide) {
    v = redacted_marker;
    if (on) on("value of " + quoted(name) + " at " + here.path());
    return 1;
  }
  std::size_t n = 0;
  if (v.is_object()) {
    for (auto& kv : v.get_object()) {
      std::string_view key(kv.key().data(), kv.key().size());
      n += redact_under(kv.value(), name, suffix, here.member(key), on);
    }
  } else if (v.is_array()) {
    auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) n += redact_under(a[i], name, suffix, here.item(i), on);
  }
  return n;
}

std::size_t walk(json::value& v, std::string_view name, const Place& here, const OnRedact& on) {
  if (!name.empty()) {
    std::string_view suffix = secret_suffix(name);
    if (!suffix.empty()) return redact_under(v, name, suffix, here, on);
  }
  if (v.is_string()) {
    auto& js = v.get_string();
    std::string s;
    std::size_t n = redact_text(std::string_view(js.data(), js.size()), s, [&](const std::string& kind) {
      if (on) on(kind + " at " + here.path());
    });
    if (n) v = json::string(s);
    return n;
  }
  std::size_t n = 0;
  if (v.is_object()) {
    for (auto& kv : v.get_object()) {
      std::string_view key(kv.key().data(), kv.key().size());
      n += walk(kv.value(), key, here.member(key), on);
    }
  } else if (v.is_array()) {
    auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) n += walk(a[i], {}, here.item(i), on);
  }
  return n;
}

}  // namespace

bool is_secret_name(std::string_view name) { return !secret_suffix(name).empty(); }

std::size_t redact(json::value& v, const OnRedact& on_redact) { return walk(v, {}, Place{nullptr, "."}, on_redact); }

std::size_t redact_member(json::value& v, std::string_view name, std::string_view path, const OnRedact& on_redact) {
  return walk(v, name, Place{nullptr, path}, on_redact);
}

std::size_t redact_string(std::string& s) { return redact_text(s, s, {}); }

}  // namespace loopkit
