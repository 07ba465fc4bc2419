// The matchers of core/redact/redact.cpp, internal to the redact_*.cpp files: each
// looks at one position of a text and says what secret starts (or, for
// assignments, what value follows) there. Hand-written: std::regex would cost
// more at start-up than a whole save takes to scan. The formats follow the
// public rule sets of gitleaks (its config/gitleaks.toml) and detect-secrets
// (its plugins); the rules are our own, and tests/unit/redact_test.cpp lists
// each format.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loopkit::redact_detail {

inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
inline bool is_word(char c) { return is_alnum(c) || c == '_' || c == '-'; }
inline char to_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
inline bool is_space(char c) { return c == ' ' || c == '\t'; }
inline bool is_quote(char c) { return c == '"' || c == '\'' || c == '`'; }
inline bool is_line_end(char c) { return c == '\n' || c == '\r'; }

inline bool starts_with_at(std::string_view s, std::size_t i, std::string_view p) {
  return i <= s.size() && s.size() - i >= p.size() && s.compare(i, p.size(), p) == 0;
}
bool all_digits(std::string_view v);

struct Span {
  std::size_t begin = 0, end = 0;  // end 0: no match
};

// ---- tokens by their shape (redact_tokens.cpp)

struct TokenMatch {
  Span span;
  const char* kind = nullptr;
};
// A key or token of a known provider by its prefix, or of a known shape
// without one (Telegram, Mailchimp, Discord, Azure AD); i starts a word.
TokenMatch match_token(std::string_view s, std::size_t i);
// eyJ...header.payload.signature: its end, or 0
std::size_t match_jwt(std::string_view s, std::size_t i);
// "Bearer TOKEN": the token's extent
Span match_bearer(std::string_view s, std::size_t i);
// -----BEGIN ...PRIVATE KEY----- through its END line (or the end of the
// text: a truncated key is still secret); with any_label, any BEGIN block
// (the value of a secret name); returns its end or 0.
std::size_t match_private_key(std::string_view s, std::size_t i, bool any_label = false);
// scheme://user:PASSWORD@host: the password's extent
Span match_url_password(std::string_view s, std::size_t i);

// ---- values under names that say secret (redact_names.cpp)

// Which secret name a member name ends with ("" for none): see is_secret_name.
std::string_view secret_suffix(std::string_view name);
// A value worth hiding under a name with that suffix: not empty, not "$VAR",
// "{...}", null or an earlier marker, not a count under a "token" name.
bool secret_value(std::string_view suffix, std::string_view v);

struct Assignment {
  Span value;
  std::string key;
};
// At a '=' or ':' (password=x, "api_key": "x", "password" => "x",
// password[0]=x, user[password]=x): the key before it and the extent of the
// value after it; value.end 0 when the key is not secret or there is none.
Assignment match_assignment(std::string_view s, std::size_t i);
// At a '>' that closes <NAME> with a secret NAME (<password>x</password>,
// Maven's and Tomcat's XML): the text up to the next '<'.
Assignment match_element(std::string_view s, std::size_t i);
// At a quote after SQL's PASSWORD or IDENTIFIED BY (CREATE USER u WITH
// PASSWORD 'x'): the quoted text.
Assignment match_sql_password(std::string_view s, std::size_t i);
// A secret option of a command line at i (curl -u U:P, mysql -pP,
// --password P): the value's extent.
Span match_command_option(std::string_view s, std::size_t i);

}  // namespace loopkit::redact_detail
