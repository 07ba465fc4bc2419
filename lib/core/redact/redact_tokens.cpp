// Secrets by their shape: keys and tokens of the common providers by their
// prefix, shapes without one, JSON web tokens, bearer tokens, private-key
// blocks and passwords in URLs (see core/redact/redact_match.hpp).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/redact/redact.hpp"
#include "core/redact/redact_match.hpp"

namespace loopkit::redact_detail {

namespace {

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

// The prefixes by first byte, longest first within each (ties in table
// order): order[start[c]] to order[start[c + 1]] are those of byte c. Made
// at compile time: building it at run time was a tenth of a small save's cost.
struct PrefixIndex {
  std::array<std::uint8_t, prefixes.size()> order{};
  std::array<std::uint16_t, 257> start{};
};
constexpr PrefixIndex make_prefix_index() {
  static_assert(prefixes.size() < 256);
  PrefixIndex x;
  std::size_t n = 0;
  for (std::size_t c = 0; c < 256; ++c) {
    x.start[c] = static_cast<std::uint16_t>(n);
    const std::size_t first = n;
    for (std::size_t k = 0; k < prefixes.size(); ++k) {
      if (static_cast<unsigned char>(prefixes[k].prefix[0]) != c) continue;
      std::size_t j = n++;
      for (; j > first && prefixes[x.order[j - 1]].prefix.size() < prefixes[k].prefix.size(); --j)
        x.order[j] = x.order[j - 1];
      x.order[j] = static_cast<std::uint8_t>(k);
    }
  }
  x.start[256] = static_cast<std::uint16_t>(n);
  return x;
}
constexpr PrefixIndex prefix_index = make_prefix_index();

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
  const auto c = static_cast<unsigned char>(s[i]);
  for (std::size_t j = prefix_index.start[c]; j < prefix_index.start[c + 1]; ++j) {
    const Prefix& p = prefixes[prefix_index.order[j]];
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

}  // namespace

bool all_digits(std::string_view v) {
  if (v.empty()) return false;
  for (char c : v)
    if (!is_digit(c)) return false;
  return true;
}

std::size_t match_private_key(std::string_view s, std::size_t i, bool any_label) {
  if (!starts_with_at(s, i, "-----BEGIN ")) return 0;
  std::size_t label = i + 11;
  // bounded, so that many BEGIN lines without a label's end stay linear
  std::size_t close = s.substr(0, std::min(s.size(), label + 100)).find("-----", label);
  if (close == std::string_view::npos) return 0;
  std::string_view l = s.substr(label, close - label);
  if (l.find('\n') != std::string_view::npos) return 0;
  if (!any_label && l.find("PRIVATE KEY") == std::string_view::npos) return 0;
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

TokenMatch match_token(std::string_view s, std::size_t i) {
  if (PrefixMatch m = match_prefix(s, i); m.span.end) return {m.span, m.kind};
  if (Shape m = match_shape(s, i); m.end) return {{i, m.end}, m.kind};
  return {};
}

}  // namespace loopkit::redact_detail
