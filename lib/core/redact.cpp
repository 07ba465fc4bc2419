#include "core/redact.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "sys/error.hpp"

namespace loopkit {

namespace {

// Hand-written matchers: std::regex would cost more at start-up than a whole
// save takes to scan. The formats covered follow the public rule sets of
// gitleaks (its config/gitleaks.toml) and detect-secrets (its plugins); the
// rules below are our own, and tests/unit/redact_test.cpp lists each format.
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_word(char c) { return is_alnum(c) || c == '_' || c == '-'; }
char to_lower(char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_quote(char c) { return c == '"' || c == '\'' || c == '`'; }

enum class Chars {
  alnum,
  alnum_underscore,
  alnum_dash,
  word,
  word_dot,
  upper_digit,
  upper_digit_dash,
  hex,
  base64,
  url
};

bool in_class(char c, Chars k) {
  switch (k) {
    case Chars::alnum: return is_alnum(c);
    case Chars::alnum_underscore: return is_alnum(c) || c == '_';
    case Chars::alnum_dash: return is_alnum(c) || c == '-';
    case Chars::word: return is_word(c);
    case Chars::word_dot: return is_word(c) || c == '.';
    case Chars::upper_digit: return is_upper(c) || is_digit(c);
    case Chars::upper_digit_dash: return is_upper(c) || is_digit(c) || c == '-';
    case Chars::hex: return is_hex(c);
    case Chars::base64: return is_word(c) || c == '+' || c == '/' || c == '=';
    case Chars::url: return is_word(c) || c == '/' || c == '.' || c == '%' || c == '~' || c == ':' || c == '@';
  }
  return false;
}

struct Prefix {
  std::string_view prefix;
  const char* kind;
  std::size_t min_body;
  Chars chars;
  bool need_digit = false;   // a generic prefix ("sk-") must not eat hyphenated prose
  std::size_t exact = 0;     // body length when fixed (AWS, hex keys)
  bool keep_prefix = false;  // webhook URLs: the address stays, its secret path goes
};

constexpr Prefix key(std::string_view p, const char* kind, std::size_t min, Chars c) { return {p, kind, min, c}; }
constexpr Prefix key_with_digit(std::string_view p, const char* kind, std::size_t min, Chars c) {
  return {p, kind, min, c, true};
}
constexpr Prefix fixed(std::string_view p, const char* kind, std::size_t n, Chars c) {
  return {p, kind, n, c, false, n};
}
constexpr Prefix url_path(std::string_view marker, const char* kind) {
  return {marker, kind, 16, Chars::url, false, 0, true};
}

// Where two prefixes share a start, the index below tries the longer first,
// so that "sk-ant-" is named before "sk-".
constexpr std::array prefixes{
    // AI providers
    key("sk-ant-", "Anthropic API key", 20, Chars::word),
    key("sk-proj-", "OpenAI API key", 20, Chars::word),
    key("sk-svcacct-", "OpenAI API key", 20, Chars::word),
    key("sk-admin-", "OpenAI API key", 20, Chars::word),
    key("sk-or-", "OpenRouter API key", 20, Chars::word),
    key_with_digit("sk-", "OpenAI API key", 20, Chars::word),
    key("gsk_", "Groq API key", 40, Chars::alnum),
    key("xai-", "xAI API key", 40, Chars::alnum),
    key("pplx-", "Perplexity API key", 40, Chars::alnum),
    key("r8_", "Replicate token", 30, Chars::alnum),
    key("hf_", "Hugging Face token", 30, Chars::alnum),
    key("api_org_", "Hugging Face token", 30, Chars::alnum),
    key("tvly-", "Tavily API key", 20, Chars::word),
    key("lsv2_", "LangSmith API key", 30, Chars::word),
    key("pcsk_", "Pinecone API key", 30, Chars::word),
    fixed("fc-", "Firecrawl API key", 32, Chars::hex),
    // Google
    key("AIza", "Google API key", 30, Chars::word),
    key("ya29.", "Google OAuth token", 20, Chars::word_dot),
    key("1//0", "Google refresh token", 30, Chars::word),
    key("GOCSPX-", "Google OAuth client secret", 20, Chars::word),
    // code hosting and package registries
    key("github_pat_", "GitHub token", 20, Chars::alnum_underscore),
    key("ghp_", "GitHub token", 20, Chars::alnum),
    key("gho_", "GitHub token", 20, Chars::alnum),
    key("ghu_", "GitHub token", 20, Chars::alnum),
    key("ghs_", "GitHub token", 20, Chars::alnum),
    key("ghr_", "GitHub token", 20, Chars::alnum),
    key("glpat-", "GitLab token", 20, Chars::word),
    key("glptt-", "GitLab token", 20, Chars::word),
    key("gldt-", "GitLab token", 20, Chars::word),
    key("glrt-", "GitLab token", 20, Chars::word),
    key("glft-", "GitLab token", 20, Chars::word),
    key("glimt-", "GitLab token", 20, Chars::word),
    key("glagent-", "GitLab token", 20, Chars::word),
    key("gloas-", "GitLab token", 20, Chars::word),
    key("glsoat-", "GitLab token", 20, Chars::word),
    key("glcbt-", "GitLab token", 20, Chars::word),
    key("glffct-", "GitLab token", 20, Chars::word),
    key("GR1348941", "GitLab token", 20, Chars::word),
    key("npm_", "npm token", 36, Chars::alnum),
    key("pypi-AgE", "PyPI token", 50, Chars::word),
    fixed("rubygems_", "RubyGems API key", 48, Chars::hex),
    key("dckr_pat_", "Docker Hub token", 20, Chars::word),
    key("AKCp", "Artifactory API key", 60, Chars::alnum),
    key("cmVmd", "Artifactory token", 59, Chars::alnum),
    key("ATATT", "Atlassian API token", 100, Chars::base64),
    // chat and their webhooks
    key("xoxb-", "Slack token", 10, Chars::alnum_dash),
    key("xoxp-", "Slack token", 10, Chars::alnum_dash),
    key("xoxa-", "Slack token", 10, Chars::alnum_dash),
    key("xoxr-", "Slack token", 10, Chars::alnum_dash),
    key("xoxs-", "Slack token", 10, Chars::alnum_dash),
    key("xoxo-", "Slack token", 10, Chars::alnum_dash),
    key("xoxe-", "Slack token", 10, Chars::alnum_dash),
    key("xoxe.", "Slack token", 10, Chars::alnum_dash),
    key("xapp-", "Slack token", 10, Chars::alnum_dash),
    url_path("hooks.slack.com/", "Slack webhook URL"),
    url_path("discord.com/api/webhooks/", "Discord webhook URL"),
    url_path("discordapp.com/api/webhooks/", "Discord webhook URL"),
    url_path("webhook.office.com/webhookb2/", "Microsoft Teams webhook URL"),
    url_path("hooks.zapier.com/hooks/catch/", "Zapier webhook URL"),
    url_path("api.telegram.org/bot", "Telegram bot token"),
    // clouds
    fixed("AKIA", "AWS access key", 16, Chars::upper_digit),
    fixed("ASIA", "AWS access key", 16, Chars::upper_digit),
    fixed("ABIA", "AWS access key", 16, Chars::upper_digit),
    fixed("ACCA", "AWS access key", 16, Chars::upper_digit),
    key("ABSK", "Amazon Bedrock API key", 100, Chars::base64),
    key_with_digit("LTAI", "Alibaba Cloud access key", 16, Chars::alnum),
    key("dop_v1_", "DigitalOcean token", 64, Chars::hex),
    key("doo_v1_", "DigitalOcean token", 64, Chars::hex),
    key("dor_v1_", "DigitalOcean token", 64, Chars::hex),
    key("HRKU-", "Heroku API key", 50, Chars::word),
    fixed("dapi", "Databricks token", 32, Chars::hex),
    key("hvs.", "Vault token", 90, Chars::word),
    key("hvb.", "Vault token", 130, Chars::word),
    fixed("sbp_", "Supabase token", 40, Chars::hex),
    key("pscale_", "PlanetScale token", 32, Chars::word_dot),
    key_with_digit("dp.", "Doppler token", 40, Chars::word_dot),
    key("dt0c01.", "Dynatrace token", 80, Chars::word_dot),
    key("sntrys_", "Sentry token", 50, Chars::base64),
    fixed("sntryu_", "Sentry token", 64, Chars::hex),
    key("glsa_", "Grafana token", 32, Chars::word),
    key("glc_", "Grafana token", 32, Chars::base64),
    key("PMAK-", "Postman API key", 50, Chars::word),
    fixed("pul-", "Pulumi token", 40, Chars::hex),
    key("pnu_", "Prefect token", 36, Chars::alnum),
    key("lin_api_", "Linear API key", 40, Chars::alnum),
    key("ntn_", "Notion token", 40, Chars::alnum),
    key("secret_", "Notion token", 43, Chars::alnum),
    key("rdme_", "ReadMe API key", 70, Chars::alnum),
    key("CFPAT-", "Contentful token", 40, Chars::word),
    key_with_digit("sl.", "Dropbox token", 130, Chars::word),
    key("AGE-SECRET-KEY-1", "age secret key", 50, Chars::upper_digit),
    key("A3-", "1Password secret key", 30, Chars::upper_digit_dash),
    key("ops_eyJ", "1Password token", 100, Chars::base64),
    // payments and mail
    key("sk_live_", "Stripe key", 16, Chars::alnum),
    key("rk_live_", "Stripe key", 16, Chars::alnum),
    key("sk_test_", "Stripe key", 16, Chars::alnum),
    key("rk_test_", "Stripe key", 16, Chars::alnum),
    key("whsec_", "Stripe webhook secret", 24, Chars::alnum),
    key("sq0atp-", "Square token", 20, Chars::word),
    key("sq0csp-", "Square secret", 30, Chars::word),
    key("EAAA", "Square token", 60, Chars::word),
    key("FLWSECK", "Flutterwave secret key", 20, Chars::word),
    key("shippo_live_", "Shippo token", 40, Chars::hex),
    key("shippo_test_", "Shippo token", 40, Chars::hex),
    key("EZAK", "EasyPost API key", 54, Chars::alnum),
    key("EZTK", "EasyPost API key", 54, Chars::alnum),
    fixed("shpat_", "Shopify token", 32, Chars::hex),
    fixed("shpca_", "Shopify token", 32, Chars::hex),
    fixed("shppa_", "Shopify token", 32, Chars::hex),
    fixed("shpss_", "Shopify secret", 32, Chars::hex),
    fixed("SK", "Twilio API key", 32, Chars::hex),
    key("SG.", "SendGrid API key", 60, Chars::word_dot),
    key("xkeysib-", "Brevo API key", 60, Chars::word),
    fixed("key-", "Mailgun API key", 32, Chars::hex),
};

// The prefixes by first byte, longest first within each.
const std::array<std::vector<std::uint8_t>, 256>& prefix_index() {
  static_assert(prefixes.size() < 256);
  static const auto index = [] {
    std::array<std::vector<std::uint8_t>, 256> idx;
    for (std::size_t k = 0; k < prefixes.size(); ++k)
      idx[static_cast<unsigned char>(prefixes[k].prefix[0])].push_back(static_cast<std::uint8_t>(k));
    for (auto& bucket : idx)
      std::stable_sort(bucket.begin(), bucket.end(),
                       [](auto a, auto b) { return prefixes[a].prefix.size() > prefixes[b].prefix.size(); });
    return idx;
  }();
  return index;
}

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
  for (const SecretName& s : secret_names) {
    std::string_view v = s.name;
    if (n.size() < v.size() || n.compare(n.size() - v.size(), v.size(), v) != 0) continue;
    if (n.size() == v.size() ? !s.qualified : n[n.size() - v.size() - 1] == '_') return v;
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

struct Span {
  std::size_t begin = 0, end = 0;  // end 0: no match
};

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

// "Bearer TOKEN": where TOKEN starts and ends.
Span match_bearer(std::string_view s, std::size_t i) {
  static constexpr std::string_view word = "bearer";
  if (s.size() - i < word.size() + 2) return {};
  for (std::size_t k = 0; k < word.size(); ++k)
    if (to_lower(s[i + k]) != word[k]) return {};
  std::size_t t = i + word.size();
  if (!is_space(s[t])) return {};
  while (t < s.size() && is_space(s[t])) ++t;
  std::size_t e = t;
  bool digit = false;
  auto token_char = [](char c) {
    return is_alnum(c) || c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=' || c == '-';
  };
  while (e < s.size() && token_char(s[e])) digit |= is_digit(s[e++]);
  // "the bearer of bad news" and "Bearer authentication" are prose
  if (e - t < 8 || !digit) return {};
  return {t, e};
}

// scheme://user:PASSWORD@host. Passwords often hold '@', '#' or '/'
// unescaped (postgres://app:p@ss#word@db/x), so the password runs to the
// last '@' before the first '/' after it, or, when there is none, to the
// first '@' past that '/'. host:PORT and links without a user are left alone.
Span match_url_password(std::string_view s, std::size_t i) {
  if (!starts_with_at(s, i, "://")) return {};
  // bounded, so that "x://x://..." stays linear
  const std::size_t b = i + 3, limit = std::min(s.size(), b + 1024);
  auto ends_url = [](char c) { return is_space(c) || c == '\n' || c == '\r' || is_quote(c) || c == '<' || c == '>'; };
  std::size_t colon = b;
  while (colon < limit && s[colon] != ':') {
    char c = s[colon];
    if (c == '/' || c == '@' || c == '?' || c == '#' || ends_url(c)) return {};
    ++colon;
  }
  if (colon == limit) return {};  // redis://:PASSWORD@host has no user
  std::size_t p = colon + 1;
  while (p < limit && is_digit(s[p])) ++p;
  if (p == limit || s[p] == '/' || s[p] == '?' || s[p] == '#' || ends_url(s[p])) return {};  // host:PORT
  std::size_t slash = limit, at = 0;
  for (std::size_t k = colon + 1; k < limit && !ends_url(s[k]); ++k) {
    if (s[k] == '@') {
      if (slash == limit || !at) at = k;
      if (slash != limit) break;
    } else if (s[k] == '/' && slash == limit) {
      if (at) break;
      slash = k;
    }
  }
  if (!at || at == colon + 1 || starts_with_at(s, colon + 1, redacted_marker)) return {};
  return {colon + 1, at};
}

// eyJ...header.payload.signature
std::size_t match_jwt(std::string_view s, std::size_t i) {
  if (!starts_with_at(s, i, "eyJ")) return 0;
  std::size_t e = i, dots = 0, part = 0;
  for (; e < s.size(); ++e) {
    if (is_word(s[e])) {
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

std::size_t run_of(std::string_view s, std::size_t i, Chars k, std::size_t max = SIZE_MAX) {
  std::size_t e = i;
  while (e < s.size() && e - i < max && in_class(s[e], k)) ++e;
  return e - i;
}

// Shapes without a fixed prefix (detect-secrets' plugins): a Telegram bot
// token 123456789:AA..., a Mailchimp key HEX32-us12, a Discord bot token
// M....(24).xxxxxx.(27+), an Azure AD client secret abc8Q~(31+).
struct Shape {
  std::size_t end = 0;
  const char* kind = nullptr;
};

Shape match_shape(std::string_view s, std::size_t i) {
  const char c = s[i];
  if (is_digit(c)) {
    std::size_t d = 0;
    while (i + d < s.size() && d <= 10 && is_digit(s[i + d])) ++d;
    if (d >= 8 && d <= 10 && i + d < s.size() && s[i + d] == ':' && run_of(s, i + d + 1, Chars::word) == 35)
      return {i + d + 36, "Telegram bot token"};
  }
  if (is_hex(c)) {
    std::size_t h = run_of(s, i, Chars::hex, 33);
    if (h == 32 && starts_with_at(s, i + 32, "-us")) {
      std::size_t d = run_of(s, i + 35, Chars::alnum);
      if (d >= 1 && d <= 2 && all_digits(s.substr(i + 35, d))) return {i + 35 + d, "Mailchimp API key"};
    }
  }
  if (c == 'M' || c == 'N' || c == 'O') {
    std::size_t a = run_of(s, i, Chars::word);
    if (a >= 24 && a <= 26 && i + a < s.size() && s[i + a] == '.') {
      std::size_t b = run_of(s, i + a + 1, Chars::word);
      if (b == 6 && i + a + 7 < s.size() && s[i + a + 7] == '.') {
        std::size_t t = run_of(s, i + a + 8, Chars::word);
        if (t >= 27) return {i + a + 8 + t, "Discord bot token"};
      }
    }
  }
  if (i + 6 < s.size() && s[i + 4] == 'Q' && s[i + 5] == '~' && is_digit(s[i + 3])) {
    auto azure = [](char x) { return is_alnum(x) || x == '_' || x == '~' || x == '.' || x == '-'; };
    bool head = true;
    for (std::size_t k = i; k < i + 3; ++k) head = head && azure(s[k]) && s[k] != '-';
    std::size_t e = i + 6;
    while (e < s.size() && azure(s[e])) ++e;
    if (head && e - (i + 6) >= 31 && e - (i + 6) <= 40) return {e, "Azure AD client secret"};
  }
  return {};
}

struct PrefixMatch {
  Span span;
  const char* kind = nullptr;
};

PrefixMatch match_prefix(std::string_view s, std::size_t i) {
  for (std::uint8_t k : prefix_index()[static_cast<unsigned char>(s[i])]) {
    const Prefix& p = prefixes[k];
    // the second byte first: most words share a first letter with some prefix
    if (i + 1 >= s.size() || s[i + 1] != p.prefix[1] || !starts_with_at(s, i, p.prefix)) continue;
    std::size_t b = i + p.prefix.size(), e = b;
    bool digit = false;
    while (e < s.size() && in_class(s[e], p.chars)) digit |= is_digit(s[e++]);
    std::size_t len = e - b;
    if (p.exact) {
      if (len != p.exact || (e < s.size() && is_alnum(s[e]))) continue;
    } else if (len < p.min_body || (p.need_digit && !digit)) {
      continue;
    }
    return {{p.keep_prefix ? b : i, e}, p.kind};
  }
  return {};
}

// A word or a quoted string at v: its content's extent.
Span value_at(std::string_view s, std::size_t v) {
  if (v < s.size() && (s[v] == '"' || s[v] == '\'')) {
    char q = s[v++];
    std::size_t e = v;
    while (e < s.size() && s[e] != q && s[e] != '\n') e += (s[e] == '\\' && e + 1 < s.size()) ? 2 : 1;
    return {v, std::min(e, s.size())};
  }
  std::size_t e = v;
  while (e < s.size() && !is_space(s[e]) && s[e] != '\n' && s[e] != '\r' && !is_quote(s[e])) ++e;
  return {v, e};
}

// Is `command` a word on the line that holds i, before i? (curl ... -u)
bool line_has_command(std::string_view s, std::size_t i, std::string_view command) {
  std::size_t from = i > 512 ? i - 512 : 0;
  std::size_t nl = s.rfind('\n', i);
  if (nl != std::string_view::npos && nl >= from) from = nl + 1;
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

struct Assignment {
  Span value;
  std::string key;
};

// At a '=' or ':' (password=x, "api_key": "x", passwd: x): the key before it
// and the extent of the value after it; value.end 0 when there is none.
Assignment match_assignment(std::string_view s, std::size_t i) {
  Assignment a;
  std::size_t sep_end = i + 1;
  if (s[i] == ':' && sep_end < s.size() && s[sep_end] == '=') ++sep_end;         // state-set's :=
  if (sep_end < s.size() && (s[sep_end] == '=' || s[sep_end] == ':')) return a;  // ==, ::
  std::size_t k = i;
  while (k > 0 && i - k < 4 && is_space(s[k - 1])) --k;
  if (k > 0 && (s[k - 1] == '"' || s[k - 1] == '\'')) --k;
  std::size_t word_end = k;
  while (k > 0 && (is_word(s[k - 1]) || s[k - 1] == '.')) --k;
  if (k == word_end || (k > 0 && s[k - 1] == '/')) return a;  // /etc/passwd: is a file name
  std::string_view key = s.substr(k, word_end - k);
  std::string_view suffix = secret_suffix(key);
  if (suffix.empty()) return a;
  std::size_t v = sep_end;
  while (v < s.size() && is_space(s[v])) ++v;
  std::size_t e;
  if (v < s.size() && (s[v] == '"' || s[v] == '\'')) {
    Span q = value_at(s, v);
    v = q.begin;
    e = q.end;
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
    while (e < s.size() && !is_space(s[e]) && s[e] != '\n' && s[e] != '\r' && !is_quote(s[e]) && s[e] != ',' &&
           s[e] != ';' && s[e] != '&' && s[e] != ')' && s[e] != '}' && s[e] != ']')
      ++e;
  }
  if (!secret_value(suffix, s.substr(v, e - v))) return a;
  a.value = {v, e};
  a.key = std::string(key);
  return a;
}

std::size_t redact_text(std::string& s, const std::function<void(const std::string&)>& on_kind) {
  std::string out;
  std::size_t count = 0, i = 0, copied = 0;
  auto replace = [&](Span span, const std::string& kind) {
    out.append(s, copied, span.begin - copied);
    out += redacted_marker;
    copied = i = span.end;
    ++count;
    if (on_kind) on_kind(kind);
  };
  const std::string_view v(s);
  while (i < v.size()) {
    const char c = v[i];
    if (c == '-') {
      if (std::size_t e = match_private_key(v, i)) {
        replace({i, e}, "private key block");
        continue;
      }
      if (Span o = match_command_option(v, i); o.end) {
        replace(o, "password on a command line");
        continue;
      }
    } else if (c == '=' || c == ':') {
      if (Span u = match_url_password(v, i); u.end) {
        replace(u, "password in a URL");
        continue;
      }
      if (Assignment a = match_assignment(v, i); a.value.end) {
        replace(a.value, "value of " + quoted(a.key));
        continue;
      }
    }
    // Keys start a word: "sk-" inside "task-sk-..." or "x_ghp_..." is not one,
    // and no start inside a run is tried again (linear time on any input).
    if (i == 0 || !is_word(v[i - 1])) {
      if (PrefixMatch m = match_prefix(v, i); m.span.end) {
        replace(m.span, m.kind);
        continue;
      }
      if (c == 'B' || c == 'b') {
        if (Span t = match_bearer(v, i); t.end) {
          replace(t, "bearer token");
          continue;
        }
      } else if (c == 'e') {
        if (std::size_t e = match_jwt(v, i)) {
          replace({i, e}, "JSON web token");
          continue;
        }
      }
      if (Shape m = match_shape(v, i); m.end) {
        replace({i, m.end}, m.kind);
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

std::string element_path(std::string_view parent, std::size_t i) {
  return (parent == "." ? "" : std::string(parent)) + "[" + std::to_string(i) + "]";
}

// Everything under a secret name goes, however deep: each string and number
// becomes the marker, while members and array lengths stay, so that a reader
// expecting an object still finds one. true, false, null and "" carry
// nothing worth hiding; a number under a "...token" name is a count
// (max_token: 4096), not a token.
std::size_t redact_under(json::value& v, std::string_view name, std::string_view suffix, const std::string& path,
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
    if (on) on("value of " + quoted(name) + " at " + path);
    return 1;
  }
  std::size_t n = 0;
  if (v.is_object()) {
    for (auto& kv : v.get_object()) {
      std::string_view key(kv.key().data(), kv.key().size());
      n += redact_under(kv.value(), name, suffix, member_path(path, key), on);
    }
  } else if (v.is_array()) {
    auto& a = v.get_array();
    for (std::size_t i = 0; i < a.size(); ++i) n += redact_under(a[i], name, suffix, element_path(path, i), on);
  }
  return n;
}

std::size_t walk(json::value& v, std::string_view name, const std::string& path, const OnRedact& on) {
  if (!name.empty()) {
    std::string_view suffix = secret_suffix(name);
    if (!suffix.empty()) return redact_under(v, name, suffix, path, on);
  }
  if (v.is_string()) {
    auto& js = v.get_string();
    std::string s(js.data(), js.size());
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
    for (std::size_t i = 0; i < a.size(); ++i) n += walk(a[i], {}, element_path(path, i), on);
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
