// Secrets by the name they are given: NAME=VALUE, "name": "value", YAML
// name: value, hash and form styles, and the options of command lines that
// take a password (see core/redact/redact_match.hpp).
#include <algorithm>
#include <array>

#include "core/redact/redact.hpp"
#include "core/redact/redact_match.hpp"

namespace loopkit::redact_detail {

namespace {

// Names whose value is secret. A name matches when the whole name is one of
// these or ends in one after a separator ("_", "-", "." or a camelCase step),
// so token_usage, token_limit and max_tokens do not; a qualified one ("pwd")
// matches only with something before it: MYSQL_PWD, never the shell's PWD.
struct SecretName {
  std::string_view name;
  bool qualified = false;
};
constexpr std::array secret_names{
    SecretName{"password"},      SecretName{"passwd"},      SecretName{"passphrase"},    SecretName{"pgpassword"},
    SecretName{"secret"},        SecretName{"api_key"},     SecretName{"apikey"},        SecretName{"access_key"},
    SecretName{"secret_key"},    SecretName{"private_key"}, SecretName{"priv_key"},      SecretName{"account_key"},
    SecretName{"auth_key"},      SecretName{"service_key"}, SecretName{"client_key"},    SecretName{"encryption_key"},
    SecretName{"signing_key"},   SecretName{"master_key"},  SecretName{"token"},         SecretName{"authorization"},
    SecretName{"credential"},    SecretName{"credentials"}, SecretName{"pwd", true},     SecretName{"db_pass"},
    SecretName{"database_pass"}, SecretName{"smtp_pass"},   SecretName{"mail_pass"},     SecretName{"email_pass"},
    SecretName{"redis_pass"},    SecretName{"mysql_pass"},  SecretName{"postgres_pass"}, SecretName{"pg_pass"},
    SecretName{"ldap_pass"},     SecretName{"ftp_pass"},    SecretName{"admin_pass"},    SecretName{"root_pass"},
    SecretName{"user_pass"},     SecretName{"proxy_pass"},  SecretName{"key_pass"},      SecretName{"store_pass"},
    SecretName{"keypass"},       SecretName{"storepass"},
};

// secret_suffix passes over names by their last letter
constexpr bool ends_as_expected() {
  for (const SecretName& n : secret_names) {
    const char c = n.name.back();
    if (c != 'd' && c != 'e' && c != 't' && c != 'y' && c != 'n' && c != 'l' && c != 's') return false;
  }
  return true;
}
static_assert(ends_as_expected(), "a secret name ends in a letter secret_suffix passes over");

// The last two letters of every secret name (and of "_key"): secret_suffix
// normalizes only the names that end in one of them.
constexpr std::array<std::string_view, 11> secret_endings{"rd", "wd", "se", "et", "ey", "en",
                                                          "on", "al", "ls", "ss", "ye"};
constexpr bool is_secret_ending(char before_last, char last) {
  for (std::string_view e : secret_endings)
    if (e[0] == before_last && e[1] == last) return true;
  return false;
}
constexpr bool ends_in_endings() {
  for (const SecretName& n : secret_names)
    if (!is_secret_ending(n.name[n.name.size() - 2], n.name.back())) return false;
  return is_secret_ending('e', 'y');  // _key
}
static_assert(ends_in_endings(), "a secret name ends in two letters secret_suffix passes over");

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

// A word or a quoted string at v: its content's extent.
Span value_at(std::string_view s, std::size_t v) {
  if (v < s.size() && (s[v] == '"' || s[v] == '\'')) {
    char q = s[v++];
    std::size_t e = v;
    // a backslash escapes the quote, never the line's end: a value stops there
    while (e < s.size() && s[e] != q && s[e] != '\n')
      e += (s[e] == '\\' && e + 1 < s.size() && s[e + 1] != '\n') ? 2 : 1;
    return {v, std::min(e, s.size())};
  }
  std::size_t e = v;
  while (e < s.size() && !is_space(s[e]) && s[e] != '\n' && s[e] != '\r' && !is_quote(s[e])) ++e;
  return {v, e};
}

// Is `command` a word on the line that holds i, before i? (curl ... -u)
bool line_has_command(std::string_view s, std::size_t i, std::string_view command) {
  std::size_t from = i > 512 ? i - 512 : 0;
  // the newline searched for in the window only: a line of many options stays linear
  std::size_t nl = s.substr(from, i - from).rfind('\n');
  if (nl != std::string_view::npos) from += nl + 1;
  std::string_view line = s.substr(from, i - from);
  for (std::size_t at = line.find(command); at != std::string_view::npos; at = line.find(command, at + 1)) {
    std::size_t end = at + command.size();
    bool starts = at == 0 || !(is_word(line[at - 1]) || line[at - 1] == '.');
    if (starts && end < line.size() && is_space(line[end])) return true;
  }
  return false;
}

// Secrets given on a command line: the option, the command it belongs to,
// and whether the value may follow the option directly (-pSECRET) or after
// a space, and whether it is USER:PASSWORD (only the password goes).
struct CommandOption {
  std::string_view command, option;
  bool attached, spaced, user_colon;
};
constexpr std::array command_options{
    CommandOption{"curl", "-u", true, true, true},        CommandOption{"curl", "--user", true, true, true},
    CommandOption{"sshpass", "-p", true, true, false},    CommandOption{"mysql", "-p", true, false, false},
    CommandOption{"mysqldump", "-p", true, false, false}, CommandOption{"mysqladmin", "-p", true, false, false},
    CommandOption{"mariadb", "-p", true, false, false},   CommandOption{"redis-cli", "-a", true, true, false},
};
// Long options that take a secret whatever the command (--password VALUE;
// --password=VALUE is an assignment and found as one).
constexpr std::array<std::string_view, 8> secret_options{
    "--password", "--passwd", "--token", "--api-key", "--apikey", "--access-token", "--client-secret", "--auth-token"};

}  // namespace

Span match_command_option(std::string_view s, std::size_t i) {
  if (i > 0 && !(is_space(s[i - 1]) || is_quote(s[i - 1]) || s[i - 1] == '\n' || s[i - 1] == '(')) return {};
  std::size_t o = i;
  while (o < s.size() && (is_word(s[o]))) ++o;
  std::string_view option = s.substr(i, o - i);
  auto finish = [&](Span v, bool user_colon, std::string_view suffix) -> Span {
    if (user_colon) {
      std::size_t colon = s.find(':', v.begin);
      if (colon == std::string_view::npos || colon + 1 >= v.end) return {};
      v.begin = colon + 1;
    }
    if (v.end <= v.begin || !secret_value(suffix, s.substr(v.begin, v.end - v.begin))) return {};
    return v;
  };
  if (o < s.size() && is_space(s[o]) &&
      std::find(secret_options.begin(), secret_options.end(), option) != secret_options.end()) {
    std::size_t v = o;
    while (v < s.size() && is_space(s[v])) ++v;
    if (v < s.size() && s[v] == '-') return {};
    return finish(value_at(s, v), false, option == "--token" ? "token" : "password");
  }
  for (const CommandOption& c : command_options) {
    if (!starts_with_at(s, i, c.option)) continue;
    std::size_t v = i + c.option.size();
    if (v >= s.size()) continue;
    if (is_space(s[v])) {
      if (!c.spaced) continue;
      while (v < s.size() && is_space(s[v])) ++v;
    } else if (s[v] == '=' && c.option.size() > 2) {
      ++v;
    } else if (!c.attached || c.option.size() > 2) {
      continue;
    }
    if (v >= s.size() || s[v] == '-' || !line_has_command(s, i, c.command)) continue;
    return finish(value_at(s, v), c.user_colon, "password");
  }
  return {};
}

namespace {

// Words before "_key" that say the key is not secret: public halves,
// database and cache keys, names of messages and settings.
constexpr std::array<std::string_view, 44> plain_keys{
    "public",    "pub",      "publishable", "site",      "verify",      "verification", "sort",    "primary", "foreign",
    "partition", "hash",     "range",       "cache",     "idempotency", "lookup",       "map",     "object",  "row",
    "group",     "dedup",    "dedupe",      "unique",    "index",       "shard",        "routing", "join",    "parent",
    "composite", "compound", "natural",     "surrogate", "message",     "translation",  "i18n",    "locale",  "label",
    "tag",       "field",    "column",      "config",    "setting",     "registry",     "hot",     "shortcut"};

// A name ending in "_key" after a word that does not say otherwise:
// AZURE_STORAGE_KEY, OPENAI_KEY, stripeKey; never KEY alone, sort_key or
// public_key.
bool is_secret_key_name(std::string_view n) {
  static constexpr std::string_view tail = "_key";
  if (n.size() <= tail.size() || n.substr(n.size() - tail.size()) != tail) return false;
  std::string_view before = n.substr(0, n.size() - tail.size());
  std::size_t sep = before.rfind('_');
  std::string_view word = sep == std::string_view::npos ? before : before.substr(sep + 1);
  if (word.empty() || all_digits(word)) return false;
  return std::find(plain_keys.begin(), plain_keys.end(), word) == plain_keys.end();
}

// password2 and API_KEY_2 are the same kind of name as password and API_KEY.
std::string_view without_number(std::string_view n) {
  std::size_t e = n.size();
  while (e > 0 && is_digit(n[e - 1])) --e;
  if (e > 0 && e < n.size() && n[e - 1] == '_') --e;
  return e > 0 ? n.substr(0, e) : n;
}

}  // namespace

std::string_view secret_suffix(std::string_view name) {
  // Every secret name ends in one of these letters: most names are passed
  // over without being normalized (a scan meets a name at each ':' and '=').
  const std::string_view bare = without_number(name);
  const char last = bare.empty() ? '\0' : to_lower(bare.back());
  if (last != 'd' && last != 'e' && last != 't' && last != 'y' && last != 'n' && last != 'l' && last != 's') return {};
  // the letter before the last as normalize_name makes it: '_' at a
  // camelCase step or a separator, else lower case (bare ends in a letter,
  // so its normal form is the normal name without its number)
  if (bare.size() < 2) return {};
  const char b = bare[bare.size() - 2], l = bare.back();
  const char before_last = is_upper(l) && (is_digit(b) || (b >= 'a' && b <= 'z')) ? '_'
                           : b == '-' || b == '.' || b == ' '                     ? '_'
                                                                                  : to_lower(b);
  if (!is_secret_ending(before_last, last)) return {};
  const std::string normal = normalize_name(name);
  const std::string_view n = without_number(normal);
  for (const SecretName& s : secret_names) {
    std::string_view v = s.name;
    if (n.size() < v.size() || n.compare(n.size() - v.size(), v.size(), v) != 0) continue;
    if (n.size() == v.size() ? !s.qualified : n[n.size() - v.size() - 1] == '_') return v;
  }
  // "config.key" and "weird key" name a key of something, not a secret key
  if (bare.size() > 3 && bare[bare.size() - 4] != '.' && bare[bare.size() - 4] != ' ' && is_secret_key_name(n))
    return "key";
  return {};
}

// A value worth hiding under a secret name: token *counts* are numbers, and
// "$VAR", "{...}", null and an earlier marker are not secrets themselves.
bool secret_value(std::string_view suffix, std::string_view v) {
  if (v.empty() || v.rfind(redacted_marker, 0) == 0) return false;
  if (v[0] == '$' || v[0] == '{' || v[0] == '[' || v == "null") return false;
  if (suffix == "token" && all_digits(v)) return false;
  return true;
}

namespace {

// The end of the separator at i ('=', ':', ':=', '=>'), or 0 when it is
// none: ==, ::, !=, <=, >= compare, they do not assign.
std::size_t separator_end(std::string_view s, std::size_t i) {
  std::size_t e = i + 1;
  if (s[i] == ':' && e < s.size() && s[e] == '=') ++e;       // state-set's and Go's :=
  else if (s[i] == '=' && e < s.size() && s[e] == '>') ++e;  // Ruby's and Perl's =>
  if (e < s.size() && (s[e] == '=' || s[e] == ':')) return 0;
  if (s[i] == '=' && i > 0 && (s[i - 1] == '!' || s[i - 1] == '<' || s[i - 1] == '>' || s[i - 1] == '=')) return 0;
  return e;
}

// The name before a separator at i, skipping the quotes around it ("name",
// \"name\" inside JSON text) and one subscript: password[0] is named
// password, user[password] and user["password"] are named password.
struct Key {
  std::string_view outer, inner;  // inner: the subscript's name, if any
};
Key key_before(std::string_view s, std::size_t i) {
  Key key;
  std::size_t k = i;
  while (k > 0 && i - k < 4 && is_space(s[k - 1])) --k;
  if (k > 0 && (s[k - 1] == '"' || s[k - 1] == '\'')) --k;
  if (k > 0 && s[k - 1] == '\\') --k;
  if (k > 0 && s[k - 1] == ']') {
    const std::size_t from = k > 66 ? k - 66 : 0;  // bounded: "]=]=]=..." stays linear
    std::size_t open = s.substr(from, k - from).rfind('[');
    if (open == std::string_view::npos) return key;
    open += from;
    std::string_view in = s.substr(open + 1, k - 2 - open);
    if (in.size() >= 2 && (in[0] == '"' || in[0] == '\'') && in.back() == in[0]) in = in.substr(1, in.size() - 2);
    if (std::all_of(in.begin(), in.end(), [](char c) { return is_word(c) || c == '.'; })) key.inner = in;
    k = open;
  }
  std::size_t word_end = k;
  while (k > 0 && (is_word(s[k - 1]) || s[k - 1] == '.')) --k;
  if (k > 0 && s[k - 1] == '/') return {};  // /etc/passwd: is a file name
  key.outer = s.substr(k, word_end - k);
  return key;
}

// How far the line that holds i is indented.
std::size_t indent_of_line(std::string_view s, std::size_t i) {
  std::size_t from = s.rfind('\n', i);
  from = from == std::string_view::npos ? 0 : from + 1;
  std::size_t e = from;
  while (e < s.size() && is_space(s[e])) ++e;
  return e - from;
}

// A YAML block scalar (name: | or >, then lines indented deeper than the
// name): the extent of those lines, else end 0.
Span block_scalar(std::string_view s, std::size_t v, std::size_t key_at) {
  if (v >= s.size() || (s[v] != '|' && s[v] != '>')) return {};
  std::size_t e = v + 1;
  while (e < s.size() && (s[e] == '-' || s[e] == '+' || is_digit(s[e]))) ++e;
  while (e < s.size() && is_space(s[e])) ++e;
  if (e >= s.size() || !is_line_end(s[e])) return {};
  const std::size_t indent = indent_of_line(s, key_at);
  std::size_t begin = 0, end = 0;
  for (std::size_t line = s.find('\n', e) + 1; line > 0 && line < s.size();) {
    std::size_t nl = s.find('\n', line);
    std::size_t stop = nl == std::string_view::npos ? s.size() : nl;
    std::size_t text = line;
    while (text < stop && is_space(s[text])) ++text;
    bool blank = text == stop || (text + 1 == stop && s[text] == '\r');
    if (!blank && text - line <= indent) break;
    if (!blank) {
      if (!begin) begin = text;
      end = stop > text && s[stop - 1] == '\r' ? stop - 1 : stop;
    }
    line = nl == std::string_view::npos ? 0 : nl + 1;
  }
  return begin ? Span{begin, end} : Span{};
}

// A value written without quotes: to the next space or delimiter. A call
// or subscript (getpass(), os.environ["X"]) is code, not a value: end 0.
Span bare_value(std::string_view s, std::size_t v, std::string_view suffix) {
  if (suffix == "authorization") {
    // "Authorization: Basic dXNlcjpw": the credentials, not the scheme
    std::size_t w = v;
    while (w < s.size() && is_alpha(s[w])) ++w;
    if (w > v && w < s.size() && is_space(s[w])) {
      while (w < s.size() && is_space(s[w])) ++w;
      v = w;
    }
  }
  std::size_t e = v;
  while (e < s.size() && (is_alnum(s[e]) || s[e] == '_' || s[e] == '.')) ++e;
  if (e > v && e < s.size() && (s[e] == '(' || s[e] == '[') && is_alpha(s[v])) return {};
  while (e < s.size() && !is_space(s[e]) && !is_line_end(s[e]) && !is_quote(s[e]) && s[e] != ',' && s[e] != ';' &&
         s[e] != '&' && s[e] != ')' && s[e] != '}' && s[e] != ']')
    ++e;
  return {v, e};
}

// The value after a secret name's separator: a key block however it is
// quoted, a YAML block scalar, a quoted string (\"...\" inside JSON text
// too), or a bare word.
Span value_after(std::string_view s, std::size_t v, std::size_t key_at, std::string_view suffix) {
  while (v < s.size() && is_space(s[v])) ++v;
  if (v >= s.size()) return {};
  const bool escaped = s[v] == '\\' && v + 1 < s.size() && (s[v + 1] == '"' || s[v + 1] == '\'');
  const std::size_t body = v + (escaped ? 2 : is_quote(s[v]) ? 1 : 0);
  // what secret_value refuses, refused before a scan: "$a=$a=$a..." stays linear
  if (body >= s.size() || s[body] == '$' || s[body] == '{' || s[body] == '[') return {};
  if (std::size_t e = match_private_key(s, body, true)) return {body, e};
  if (Span b = block_scalar(s, v, key_at); b.end) return b;
  if (escaped) {
    std::size_t close = s.find(std::string_view(&s[v], 2), body);
    std::size_t nl = s.find('\n', body);
    std::size_t e = std::min({close, nl, s.size()});
    return {body, e};
  }
  if (s[v] == '"' || s[v] == '\'') return value_at(s, v);
  return bare_value(s, v, suffix);
}

}  // namespace

Assignment match_assignment(std::string_view s, std::size_t i) {
  Assignment a;
  const std::size_t sep_end = separator_end(s, i);
  if (!sep_end) return a;
  const Key key = key_before(s, i);
  std::string_view name = key.inner, suffix = secret_suffix(key.inner);
  if (suffix.empty()) {
    name = key.outer;
    suffix = secret_suffix(key.outer);
  }
  if (name.empty() || suffix.empty()) return a;
  Span v = value_after(s, sep_end, i, suffix);
  if (!v.end || !secret_value(suffix, s.substr(v.begin, v.end - v.begin))) return a;
  a.value = v;
  a.key = std::string(name);
  return a;
}

namespace {

bool is_password_word(std::string_view suffix) {
  return suffix == "password" || suffix == "passwd" || suffix == "passphrase";
}

// The word that ends at e (after at most 4 spaces), lowercased.
std::string word_before(std::string_view s, std::size_t e) {
  std::size_t k = e;
  while (k > 0 && e - k < 4 && is_space(s[k - 1])) --k;
  std::size_t end = k;
  while (k > 0 && end - k < 64 && (is_word(s[k - 1]) || s[k - 1] == '.' || s[k - 1] == ':')) --k;
  std::string w(s.substr(k, end - k));
  for (char& c : w) c = to_lower(c);
  return w;
}

}  // namespace

Assignment match_element(std::string_view s, std::size_t i) {
  Assignment a;
  std::size_t k = i;
  while (k > 0 && i - k < 64 && (is_word(s[k - 1]) || s[k - 1] == '.' || s[k - 1] == ':')) --k;
  if (k == i || k == 0 || s[k - 1] != '<') return a;
  std::string_view name = s.substr(k, i - k);
  std::string_view suffix =
      secret_suffix(name.substr(name.rfind(':') == std::string_view::npos ? 0 : name.rfind(':') + 1));
  if (suffix.empty()) return a;
  // bounded, so that "<password>" many times without a '<' after stays linear
  std::size_t end = s.substr(0, std::min(s.size(), i + 1 + 65536)).find('<', i + 1);
  if (end == std::string_view::npos) return a;
  std::size_t b = i + 1;
  while (b < end && (is_space(s[b]) || is_line_end(s[b]))) ++b;
  std::size_t e = end;
  while (e > b && (is_space(s[e - 1]) || is_line_end(s[e - 1]))) --e;
  if (!secret_value(suffix, s.substr(b, e - b))) return a;
  a.value = {b, e};
  a.key = std::string(name);
  return a;
}

Assignment match_sql_password(std::string_view s, std::size_t i) {
  Assignment a;
  // cheap tests first, as quotes are many: a space, then a word ending as
  // password, passwd, passphrase or by do
  if (i < 2 || !is_space(s[i - 1])) return a;
  std::size_t k = i - 1;
  while (k > 0 && i - k < 4 && is_space(s[k - 1])) --k;
  if (k == 0) return a;
  const char last = to_lower(s[k - 1]);
  if (last != 'd' && last != 'e' && last != 'y') return a;
  std::string w = word_before(s, i);
  std::string_view suffix = secret_suffix(w);
  if (w == "by") {
    if (k < 2 || word_before(s, k - 2) != "identified") return a;
    suffix = "password";
  } else if (!is_password_word(suffix) || w.find(':') != std::string::npos) {
    return a;
  }
  Span v = value_at(s, i);
  if (v.end >= s.size() || s[v.end] != s[i] || !secret_value(suffix, s.substr(v.begin, v.end - v.begin))) return a;
  a.value = v;
  a.key = w;
  return a;
}

}  // namespace loopkit::redact_detail
