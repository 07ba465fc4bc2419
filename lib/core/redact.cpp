#include "core/redact.hpp"

#include <array>

#include "sys/error.hpp"

namespace loopkit {

namespace {

// Hand-written matchers: std::regex would cost more at start-up than a whole
// save takes to scan.
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
char to_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_space(char c) { return c == ' ' || c == '\t'; }

enum class Chars { alnum, alnum_underscore, alnum_dash, word_dash, upper_digit };

bool in_class(char c, Chars k) {
  switch (k) {
    case Chars::alnum: return is_alnum(c);
    case Chars::alnum_underscore: return is_alnum(c) || c == '_';
    case Chars::alnum_dash: return is_alnum(c) || c == '-';
    case Chars::word_dash: return is_alnum(c) || c == '_' || c == '-';
    case Chars::upper_digit: return is_upper(c) || is_digit(c);
  }
  return false;
}

struct Prefix {
  std::string_view prefix;
  const char* kind;
  std::size_t min_body;
  Chars chars;
  bool need_digit = false;  // a generic prefix ("sk-") must not eat hyphenated prose
  std::size_t exact = 0;    // body length when fixed (AWS)
};

// Longer prefixes first, so that "sk-ant-" is named before "sk-".
constexpr std::array<Prefix, 25> prefixes{{
    {"sk-ant-", "Anthropic API key", 20, Chars::word_dash},
    {"sk-proj-", "OpenAI API key", 20, Chars::word_dash},
    {"sk-", "OpenAI API key", 20, Chars::word_dash, true},
    {"sk_live_", "Stripe key", 16, Chars::alnum},
    {"rk_live_", "Stripe key", 16, Chars::alnum},
    {"sk_test_", "Stripe key", 16, Chars::alnum},
    {"rk_test_", "Stripe key", 16, Chars::alnum},
    {"AIza", "Google API key", 30, Chars::word_dash},
    {"github_pat_", "GitHub token", 20, Chars::alnum_underscore},
    {"ghp_", "GitHub token", 20, Chars::alnum},
    {"gho_", "GitHub token", 20, Chars::alnum},
    {"ghu_", "GitHub token", 20, Chars::alnum},
    {"ghs_", "GitHub token", 20, Chars::alnum},
    {"ghr_", "GitHub token", 20, Chars::alnum},
    {"xoxb-", "Slack token", 10, Chars::alnum_dash},
    {"xoxp-", "Slack token", 10, Chars::alnum_dash},
    {"xoxa-", "Slack token", 10, Chars::alnum_dash},
    {"xoxr-", "Slack token", 10, Chars::alnum_dash},
    {"xoxs-", "Slack token", 10, Chars::alnum_dash},
    {"xoxe-", "Slack token", 10, Chars::alnum_dash},
    {"xapp-", "Slack token", 10, Chars::alnum_dash},
    {"AKIA", "AWS access key", 16, Chars::upper_digit, false, 16},
    {"ASIA", "AWS access key", 16, Chars::upper_digit, false, 16},
    {"glpat-", "GitLab token", 20, Chars::word_dash},
    {"npm_", "npm token", 36, Chars::alnum},
}};

// Names whose value is secret. "token" is here too, but a name only matches
// when the whole name is one of these or ends in one after a separator, so
// token_usage, token_limit and max_tokens do not.
constexpr std::array<std::string_view, 12> secret_names{
    "password",   "passwd",     "passphrase",  "secret",        "api_key", "apikey",
    "access_key", "secret_key", "private_key", "client_secret", "token",   "authorization"};

// lower_snake form: dbPassword -> db_password, api-key -> api_key
std::string normalize_name(std::string_view name) {
  std::string n;
  n.reserve(name.size() + 4);
  for (std::size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (is_upper(c) && i > 0 && (is_digit(name[i - 1]) || (name[i - 1] >= 'a' && name[i - 1] <= 'z'))) n += '_';
    if (c == '-' || c == '.' || c == ' ') c = '_';
    n += to_lower(c);
  }
  return n;
}

// Which secret name the member name ends with ("" for none).
std::string_view secret_suffix(std::string_view name) {
  std::string n = normalize_name(name);
  for (std::string_view s : secret_names) {
    if (n.size() < s.size() || n.compare(n.size() - s.size(), s.size(), s) != 0) continue;
    if (n.size() == s.size() || n[n.size() - s.size() - 1] == '_') return s;
  }
  return {};
}

bool all_digits(std::string_view v) {
  if (v.empty()) return false;
  for (char c : v)
    if (!is_digit(c)) return false;
  return true;
}

// A value worth hiding under a secret name: token *counts* are numbers, and
// "$VAR", "{...}", null and an earlier marker are not secrets themselves.
bool secret_value(std::string_view suffix, std::string_view v) {
  if (v.empty() || v.rfind(redacted_marker, 0) == 0) return false;
  if (v[0] == '$' || v[0] == '{' || v[0] == '[' || v == "null") return false;
  if (suffix == "token" && all_digits(v)) return false;
  return true;
}

bool starts_with_at(std::string_view s, std::size_t i, std::string_view p) {
  return s.size() - i >= p.size() && s.compare(i, p.size(), p) == 0;
}

// -----BEGIN ... PRIVATE KEY----- through the matching END line (or the end
// of the text, since a truncated key is still secret); returns its end or 0.
std::size_t match_private_key(std::string_view s, std::size_t i) {
  if (!starts_with_at(s, i, "-----BEGIN ")) return 0;
  std::size_t label = i + 11;
  std::size_t close = s.find("-----", label);
  if (close == std::string_view::npos) return 0;
  std::string_view l = s.substr(label, close - label);
  if (l.find('\n') != std::string_view::npos || l.find("PRIVATE KEY") == std::string_view::npos) return 0;
  std::size_t end = s.find("-----END ", close + 5);
  if (end == std::string_view::npos) return s.size();
  std::size_t end_close = s.find("-----", end + 9);
  return end_close == std::string_view::npos ? s.size() : end_close + 5;
}

// "Bearer TOKEN": returns where TOKEN starts and ends, or {0, 0}.
std::pair<std::size_t, std::size_t> match_bearer(std::string_view s, std::size_t i) {
  static constexpr std::string_view word = "bearer";
  if (s.size() - i < word.size() + 2) return {0, 0};
  for (std::size_t k = 0; k < word.size(); ++k)
    if (to_lower(s[i + k]) != word[k]) return {0, 0};
  std::size_t t = i + word.size();
  if (!is_space(s[t])) return {0, 0};
  while (t < s.size() && is_space(s[t])) ++t;
  std::size_t e = t;
  bool digit = false;
  auto token_char = [](char c) {
    return is_alnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
  };
  while (e < s.size() && token_char(s[e])) digit |= is_digit(s[e++]);
  // "the bearer of bad news" and "Bearer authentication" are prose
  if (e - t < 8 || !digit) return {0, 0};
  return {t, e};
}

// scheme://user:PASSWORD@host: returns the password's extent, or {0, 0}.
std::pair<std::size_t, std::size_t> match_url_password(std::string_view s, std::size_t i) {
  if (!starts_with_at(s, i, "://")) return {0, 0};
  std::size_t b = i + 3, colon = 0, e = b;
  // user:password is short; the bound keeps "x://x://..." from going quadratic
  for (; e < s.size() && e - b < 256 && s[e] != '@'; ++e) {
    char c = s[e];
    if (c == '/' || c == '?' || c == '#' || is_space(c) || c == '\n' || c == '"' || c == '\'') return {0, 0};
    if (c == ':' && !colon) colon = e;
  }
  if (e == s.size() || s[e] != '@' || !colon || colon + 1 == e || starts_with_at(s, colon + 1, redacted_marker)) return {0, 0};
  return {colon + 1, e};
}

// eyJ...header.payload.signature
std::size_t match_jwt(std::string_view s, std::size_t i) {
  if (!starts_with_at(s, i, "eyJ")) return 0;
  std::size_t e = i, dots = 0, part = 0;
  for (; e < s.size(); ++e) {
    if (in_class(s[e], Chars::word_dash)) {
      ++part;
    } else if (s[e] == '.' && part >= 10 && dots < 2) {
      ++dots;
      part = 0;
    } else {
      break;
    }
  }
  return dots == 2 && part >= 10 ? e : 0;
}

struct PrefixMatch {
  std::size_t end = 0;
  const char* kind = nullptr;
};

PrefixMatch match_prefix(std::string_view s, std::size_t i) {
  for (const Prefix& p : prefixes) {
    if (!starts_with_at(s, i, p.prefix)) continue;
    std::size_t b = i + p.prefix.size(), e = b;
    bool digit = false;
    while (e < s.size() && in_class(s[e], p.chars)) digit |= is_digit(s[e++]);
    std::size_t len = e - b;
    if (p.exact) {
      if (len < p.exact) continue;
      e = b + p.exact;
      if (e < s.size() && is_alnum(s[e])) continue;
    } else if (len < p.min_body || (p.need_digit && !digit)) {
      continue;
    }
    return {e, p.kind};
  }
  return {};
}

struct Assignment {
  std::size_t value_begin = 0, value_end = 0;
  std::string key;
};

// At a '=' or ':' (password=x, "api_key": "x", passwd: x): the key before it
// and the extent of the value after it; value_end 0 when there is none.
Assignment match_assignment(std::string_view s, std::size_t i) {
  Assignment a;
  std::size_t sep_end = i + 1;
  if (s[i] == ':' && sep_end < s.size() && s[sep_end] == '=') ++sep_end;  // state-set's :=
  if (sep_end < s.size() && (s[sep_end] == '=' || s[sep_end] == ':')) return a;  // ==, ::
  std::size_t k = i;
  while (k > 0 && i - k < 4 && is_space(s[k - 1])) --k;
  if (k > 0 && (s[k - 1] == '"' || s[k - 1] == '\'')) --k;
  std::size_t word_end = k;
  while (k > 0 && (is_alnum(s[k - 1]) || s[k - 1] == '_' || s[k - 1] == '-' || s[k - 1] == '.')) --k;
  if (k == word_end || (k > 0 && s[k - 1] == '/')) return a;  // /etc/passwd: is a file name
  std::string_view key = s.substr(k, word_end - k);
  std::string_view suffix = secret_suffix(key);
  if (suffix.empty()) return a;
  std::size_t v = sep_end;
  while (v < s.size() && is_space(s[v])) ++v;
  std::size_t e;
  if (v < s.size() && (s[v] == '"' || s[v] == '\'')) {
    char q = s[v++];
    e = v;
    while (e < s.size() && s[e] != q && s[e] != '\n') e += (s[e] == '\\' && e + 1 < s.size()) ? 2 : 1;
    if (e > s.size()) e = s.size();
  } else {
    if (suffix == "authorization") {
      // "Authorization: Basic dXNlcjpw": the credentials, not the scheme
      std::size_t w = v;
      while (w < s.size() && is_alpha(s[w])) ++w;
      if (w > v && w < s.size() && is_space(s[w])) {
        while (w < s.size() && is_space(s[w])) ++w;
        v = w;
      }
    }
    e = v;
    while (e < s.size() && !is_space(s[e]) && s[e] != '\n' && s[e] != '\r' && s[e] != '"' && s[e] != '\'' &&
           s[e] != ',' && s[e] != ';' && s[e] != '&' && s[e] != ')' && s[e] != '}' && s[e] != ']')
      ++e;
  }
  if (!secret_value(suffix, s.substr(v, e - v))) return a;
  a.value_begin = v;
  a.value_end = e;
  a.key = std::string(key);
  return a;
}

std::size_t redact_text(std::string& s, const std::function<void(const std::string&)>& on_kind) {
  std::string out;
  std::size_t count = 0, i = 0, copied = 0;
  auto replace = [&](std::size_t from, std::size_t to, const std::string& kind) {
    out.append(s, copied, from - copied);
    out += redacted_marker;
    copied = to;
    i = to;
    ++count;
    if (on_kind) on_kind(kind);
  };
  while (i < s.size()) {
    char c = s[i];
    // Keys start a word: "sk-" inside "task-sk-..." or "x_ghp_..." is not one,
    // and no start inside a run is tried again (linear time on any input).
    bool boundary = i == 0 || !(is_alnum(s[i - 1]) || s[i - 1] == '_' || s[i - 1] == '-');
    if (c == '-') {
      if (std::size_t e = match_private_key(s, i)) {
        replace(i, e, "private key block");
        continue;
      }
    } else if (c == '=' || c == ':') {
      if (auto [b, e] = match_url_password(s, i); e) {
        replace(b, e, "password in a URL");
        continue;
      }
      Assignment a = match_assignment(s, i);
      if (a.value_end) {
        replace(a.value_begin, a.value_end, "value of " + quoted(a.key));
        continue;
      }
    } else if (boundary && (c == 'B' || c == 'b')) {
      auto [t, e] = match_bearer(s, i);
      if (e) {
        replace(t, e, "bearer token");
        continue;
      }
    } else if (boundary && c == 'e') {
      if (std::size_t e = match_jwt(s, i)) {
        replace(i, e, "JSON web token");
        continue;
      }
    } else if (boundary) {
      PrefixMatch m = match_prefix(s, i);
      if (m.end) {
        replace(i, m.end, m.kind);
        continue;
      }
    }
    ++i;
  }
  if (count) {
    out.append(s, copied, std::string::npos);
    s = std::move(out);
  }
  return count;
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

std::size_t walk(json::value& v, std::string_view name, const std::string& path, const OnRedact& on) {
  if (v.is_string()) {
    auto& js = v.get_string();
    std::string_view text(js.data(), js.size());
    if (!name.empty()) {
      std::string_view suffix = secret_suffix(name);
      if (!suffix.empty() && secret_value(suffix, text)) {
        v = redacted_marker;
        if (on) on("value of " + quoted(name) + " at " + path);
        return 1;
      }
    }
    std::string s(text);
    std::size_t n = redact_text(s, [&](const std::string& kind) {
      if (on) on(kind + " at " + path);
    });
    if (n) v = json::string(s);
    return n;
  }
  std::size_t n = 0;
  if (v.is_object()) {
    for (auto& kv : v.get_object()) {
      std::string_view key(kv.key().data(), kv.key().size());
      n += walk(kv.value(), key, member_path(path, key), on);
    }
  } else if (v.is_array()) {
    auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i)
      n += walk(a[i], {}, (path == "." ? "" : path) + "[" + std::to_string(i) + "]", on);
  }
  return n;
}

}  // namespace

bool is_secret_name(std::string_view name) { return !secret_suffix(name).empty(); }

std::size_t redact(json::value& v, const OnRedact& on_redact) { return walk(v, {}, ".", on_redact); }

std::size_t redact_member(json::value& v, std::string_view name, std::string_view path, const OnRedact& on_redact) {
  return walk(v, name, std::string(path), on_redact);
}

std::size_t redact_string(std::string& s) { return redact_text(s, {}); }

}  // namespace loopkit
