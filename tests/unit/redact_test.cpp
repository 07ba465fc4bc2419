// lib/core/redact: each secret format goes, look-alikes and ordinary text stay.
// Every secret here is made up at run time from a fixed seed: realistic in
// shape, never a real credential (and no scanner finds one in this file).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/redact/redact.hpp"

using namespace loopkit;

namespace {

std::string red(std::string s) {
  redact_string(s);
  return s;
}

constexpr std::string_view kAlnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::string_view kAlpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kWord = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
constexpr std::string_view kHex = "0123456789abcdef";
constexpr std::string_view kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
constexpr std::string_view kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// n characters of alphabet, from a fixed pseudo-random sequence
std::string fake(std::string_view alphabet, std::size_t n) {
  static std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    s += alphabet[(state >> 33) % alphabet.size()];
  }
  return s;
}

std::string alnum(std::size_t n) { return fake(kAlnum, n); }
std::string word(std::size_t n) { return fake(kWord, n); }
std::string hex(std::size_t n) { return fake(kHex, n); }

struct Case {
  std::string format;   // what the secret is
  std::string pattern;  // the text around it; "%s" marks where it goes
  std::string secret;   // exactly what must become [REDACTED]
};

std::string fill(const std::string& pattern, const std::string& with) {
  std::string s = pattern;
  s.replace(s.find("%s"), 2, with);
  return s;
}

std::vector<Case> secret_cases() {
  const std::string rsa = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + fake(kBase64, 64) + "\n" +
                          fake(kBase64, 64) + "\n-----END RSA PRIVATE KEY-----";
  const std::string openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + fake(kBase64, 40) +
                              "\n-----END OPENSSH PRIVATE KEY-----";
  const std::string jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOi" + alnum(30) + "." + word(43);
  return {
      // AI providers
      {"OpenAI key", "key %s ok", "sk-" + alnum(48)},
      {"OpenAI project key", "OPENAI_KEY_FILE_CONTENT %s", "sk-proj-" + word(156)},
      {"OpenAI service account key", "use %s.", "sk-svcacct-" + word(120)},
      {"Anthropic key", "ANTHROPIC=%s", "sk-ant-api03-" + word(93) + "AA"},
      {"Anthropic admin key", "(%s)", "sk-ant-admin01-" + word(93) + "AA"},
      {"OpenRouter key", "router %s", "sk-or-v1-" + hex(64)},
      {"Groq key", "groq %s", "gsk_" + alnum(52)},
      {"xAI key", "grok %s", "xai-" + alnum(80)},
      {"Perplexity key", "pplx: [%s]", "pplx-" + alnum(48)},
      {"Replicate token", "REPLICATE %s", "r8_" + alnum(37)},
      {"Hugging Face token", "login with %s today", "hf_" + fake(kAlpha, 34)},
      {"Hugging Face org token", "org %s", "api_org_" + fake(kAlpha, 34)},
      {"Tavily key", "search %s", "tvly-" + alnum(32)},
      {"LangSmith key", "trace %s", "lsv2_pt_" + hex(32) + "_" + hex(10)},
      {"Pinecone key", "index %s", "pcsk_" + alnum(5) + "_" + word(60)},
      {"Firecrawl key", "crawl %s", "fc-" + hex(32)},
      // Google
      {"Google API key", " %s.", "AIza" + word(35)},
      {"Google OAuth access token", "token is %s", "ya29.a0" + word(150)},
      {"Google refresh token", "refresh %s", "1//0" + word(100)},
      {"Google OAuth client secret", "client %s", "GOCSPX-" + word(28)},
      // code hosting and registries
      {"GitHub classic token", "t=%s,", "ghp_" + alnum(36)},
      {"GitHub OAuth token", "%s", "gho_" + alnum(36)},
      {"GitHub user-to-server token", "%s", "ghu_" + alnum(36)},
      {"GitHub server-to-server token", "%s", "ghs_" + alnum(36)},
      {"GitHub refresh token", "%s", "ghr_" + alnum(36)},
      {"GitHub fine-grained token", "pat %s", "github_pat_11" + alnum(20) + "_" + alnum(59)},
      {"GitLab personal token", "gl %s", "glpat-" + word(20)},
      {"GitLab pipeline trigger token", "gl %s", "glptt-" + hex(40)},
      {"GitLab deploy token", "gl %s", "gldt-" + word(20)},
      {"GitLab runner token", "gl %s", "glrt-" + word(20)},
      {"GitLab runner registration token", "gl %s", "GR1348941" + word(20)},
      {"npm token", "//registry.npmjs.org/:_authToken=%s", "npm_" + alnum(36)},
      {"npm token in prose", "npm %s", "npm_" + alnum(36)},
      {"PyPI token", "twine %s", "pypi-AgEIcHlwaS5vcmc" + word(70)},
      {"RubyGems key", "gem %s", "rubygems_" + hex(48)},
      {"Docker Hub token", "docker %s", "dckr_pat_" + word(27)},
      {"Artifactory key", "jfrog %s", "AKCp" + alnum(69)},
      {"Atlassian token", "jira %s", "ATATT3xFfGF0" + word(180)},
      // chat and webhooks
      {"Slack bot token", "%s", "xoxb-" + fake("0123456789", 12) + "-" + fake("0123456789", 13) + "-" + alnum(24)},
      {"Slack user token", "%s", "xoxp-" + fake("0123456789", 12) + "-" + fake("0123456789", 12) + "-" + alnum(32)},
      {"Slack app token", "%s", "xapp-1-A" + alnum(10) + "-" + fake("0123456789", 13) + "-" + hex(64)},
      {"Slack config token", "%s", "xoxe.xoxp-1-" + alnum(160)},
      {"Slack webhook", "post to https://hooks.slack.com/%s now",
       "services/T" + fake(kUpper, 8) + "/B" + fake(kUpper, 10) + "/" + alnum(24)},
      {"Discord webhook", "https://discord.com/api/webhooks/%s", fake("0123456789", 18) + "/" + word(68)},
      {"Discord webhook (old host)", "'https://discordapp.com/api/webhooks/%s'",
       fake("0123456789", 18) + "/" + word(68)},
      {"Teams webhook", "https://contoso.webhook.office.com/webhookb2/%s",
       hex(8) + "-" + hex(4) + "-" + hex(4) + "-" + hex(4) + "-" + hex(12) + "@" + hex(8) + "/IncomingWebhook/" +
           hex(32)},
      {"Telegram bot URL", "https://api.telegram.org/bot%s?chat_id=5",
       fake("0123456789", 10) + ":AA" + word(33) + "/sendMessage"},
      {"Telegram bot token", "TG %s", fake("123456789", 9) + ":AA" + word(33)},
      {"Discord bot token", "bot %s", "MT" + alnum(22) + "." + word(6) + "." + word(38)},
      // clouds
      {"AWS access key", "%s and more", "AKIA" + fake(kUpper, 16)},
      {"AWS temporary key", "%s", "ASIA" + fake(kUpper, 16)},
      {"AWS secret key by name", "aws_secret_access_key = %s", fake(kBase64, 40)},
      {"Amazon Bedrock key", "%s", "ABSK" + fake(kBase64, 130)},
      {"Alibaba access key", "%s", "LTAI5t" + alnum(18)},
      {"DigitalOcean token", "%s", "dop_v1_" + hex(64)},
      {"Heroku key", "%s", "HRKU-AA" + word(58)},
      {"Databricks token", "%s", "dapi" + hex(32)},
      {"Vault token", "VAULT %s", "hvs." + word(95)},
      {"Supabase token", "%s", "sbp_" + hex(40)},
      {"PlanetScale password", "%s", "pscale_pw_" + word(43)},
      {"Doppler token", "%s", "dp.pt." + alnum(43)},
      {"Dynatrace token", "%s", "dt0c01." + fake("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 24) + "." + alnum(64)},
      {"Sentry user token", "%s", "sntryu_" + hex(64)},
      {"Grafana service account token", "%s", "glsa_" + alnum(32) + "_" + hex(8)},
      {"Postman key", "%s", "PMAK-" + hex(24) + "-" + hex(34)},
      {"Pulumi token", "%s", "pul-" + hex(40)},
      {"Linear key", "%s", "lin_api_" + alnum(40)},
      {"Notion token", "%s", "ntn_" + fake("0123456789", 11) + alnum(35)},
      {"Azure storage key",
       "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=%s;EndpointSuffix=core.windows.net",
       fake(kBase64, 86) + "=="},
      {"Azure Service Bus key", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=%s",
       fake(kBase64, 43) + "="},
      {"Azure AD client secret", "secret %s", "abc8Q~" + word(34)},
      {"age secret key", "%s", "AGE-SECRET-KEY-1" + fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)},
      {"1Password secret key", "%s",
       "A3-" + fake(kUpper, 6) + "-" + fake(kUpper, 11) + "-" + fake(kUpper, 5) + "-" + fake(kUpper, 5) + "-" +
           fake(kUpper, 5)},
      // payments and mail
      {"Stripe live key", "%s", "sk_live_" + alnum(24)},
      {"Stripe restricted test key", "%s", "rk_test_" + alnum(24)},
      {"Stripe webhook secret", "%s", "whsec_" + alnum(32)},
      {"Square token", "%s", "sq0atp-" + word(22)},
      {"Square secret", "%s", "sq0csp-" + word(43)},
      {"Square access token", "%s", "EAAA" + word(60)},
      {"Flutterwave key", "%s", "FLWSECK_TEST-" + hex(32) + "-X"},
      {"Shopify token", "%s", "shpat_" + hex(32)},
      {"Shopify shared secret", "%s", "shpss_" + hex(32)},
      {"Twilio API key", "%s", "SK" + hex(32)},
      {"SendGrid key", "mail %s", "SG." + word(22) + "." + word(43)},
      {"Brevo key", "%s", "xkeysib-" + hex(64) + "-" + alnum(16)},
      {"Mailgun key", "%s", "key-" + hex(32)},
      {"Mailchimp key", "%s", hex(32) + "-us14"},
      // tokens of any issuer
      {"JSON web token", "t %s x", jwt},
      {"bearer token", "Authorization: Bearer %s", alnum(40)},
      {"basic credentials", "Authorization: Basic %s", fake(kBase64, 24)},
      {"RSA private key", "a\n%s\nz", rsa},
      {"OpenSSH private key", "%s", openssh},
      {"truncated EC private key", "%s", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI" + fake(kBase64, 40)},
      {"PGP private key", "%s",
       "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF" + fake(kBase64, 60) + "\n-----END PGP PRIVATE KEY BLOCK-----"},
      // passwords and names that say secret
      {"password assignment", "password=%s next", "hunter2"},
      {"PGPASSWORD", "PGPASSWORD=%s psql -h db", alnum(16)},
      {"DB_PASS", "export DB_PASS=%s", alnum(16)},
      {"MYSQL_PWD", "MYSQL_PWD='%s' mysql", alnum(12)},
      {"SMTP_PASS", "SMTP_PASS=%s", alnum(12)},
      {"URL password with @ and #", "DATABASE_URL=postgres://user:%s@host/db", "p@ss#word"},
      {"URL password, no user", "redis://:%s@cache:6379/0", alnum(20)},
      {"URL password, SRV", "mongodb+srv://admin:%s@cluster0.example.net/db?retryWrites=true", alnum(16)},
      {"URL password with /", "https://u:%s@host/x", "pa/ss"},
      {"curl -u", "curl -u alice:%s https://api.example.com", "s3cr3t-Pw"},
      {"curl --user=", "curl -s --user=alice:%s https://x", alnum(12)},
      {"curl -uUSER:PW", "curl -ualice:%s https://x", alnum(12)},
      {"sshpass -p", "sshpass -p %s ssh deploy@host", alnum(14)},
      {"sshpass -p quoted", "sshpass -p '%s' ssh host", "two words"},
      {"mysql -pPASSWORD", "mysql -u root -p%s shop", alnum(12)},
      {"redis-cli -a", "redis-cli -h cache -a %s ping", alnum(20)},
      {"--password VALUE", "docker login -u bob --password %s registry.example.com", alnum(20)},
      {"--token VALUE", "kubectl --token %s get pods", alnum(40)},
      {"--api-key VALUE", "tool --api-key %s run", alnum(32)},
      {"JSON api_key", "{\"api_key\": \"%s\", \"n\": 1}", "abc def"},
      {"YAML client_secret", "client_secret: %s", alnum(30)},
      {"X-API-Key header", "-H 'X-API-Key: %s'", hex(32)},
      {"camelCase dbPassword", "dbPassword=%s", alnum(10)},
      {"dotted Java property", "spring.datasource.password=%s", alnum(10)},
      {"GITHUB_TOKEN of no known shape", "export GITHUB_TOKEN=%s", hex(40)},
      {"secret:", "secret: %s", alnum(24)},
      {"passphrase=", "passphrase='%s'", "correct horse"},
      {"password number in JSON text", "{\"password\": %s}", "123456"},
  };
}

}  // namespace

TEST_CASE("every secret format of the table is redacted, and the message never holds it") {
  const auto cases = secret_cases();
  REQUIRE(cases.size() >= 80);
  for (const Case& c : cases) {
    INFO(c.format);
    const std::string text = fill(c.pattern, c.secret);
    CHECK(red(text) == fill(c.pattern, redacted_marker));
    json::value v = json::string(text);
    std::vector<std::string> said;
    CHECK(redact(v, [&](const std::string& what) { said.push_back(what); }) >= 1);
    for (const auto& what : said) CHECK(what.find(c.secret) == std::string::npos);
    // a redacted text holds nothing more to redact
    CHECK(red(red(text)) == red(text));
  }
}

TEST_CASE("look-alikes stay untouched") {
  const std::string sha256 = hex(64);
  for (const std::string& s : std::vector<std::string>{
           "commit 3f786850e387550fdab836ed7e6dc881de23001b fixes it",
           "short 3f78685",
           "id 550e8400-e29b-41d4-a716-446655440000",
           "the skeleton key opened the password-protected door",
           "/home/user/.ssh/id_rsa and src/auth/token_refresh.ts",
           "cat /etc/passwd: no such file",
           "https://github.com/org/repo/blob/main/README.md",
           "https://example.com:8080/a@b",
           "https://example.com:8080/a?b=c",
           "ssh://git@github.com:22/org/repo.git",
           "git@github.com:org/repo.git",
           "https://medium.com/@user/post",
           "http://localhost:3000/@scope/pkg",
           "mailto:alice@example.com",
           "https://core.telegram.org/bots/api",
           "2025-01-10T10:05:30Z",
           "12:30:45 on [2001:db8::1]:8080",
           "v1.2.3-rc.1 node-v18.17.0-linux-x64",
           std::string("\"checksum\": \"") + sha256 + "\"",
           "sha256:" + sha256,
           "md5 d41d8cd98f00b204e9800998ecf8427e",
           "\"content\": \"aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0IG9mIGJhc2U2NA==\"",
           "token_usage: 5, token_limit=128000, max_tokens=4096, token=4096",
           "the bearer of bad news",
           "Bearer authentication",
           "task-force sk-learn desk-lamp",
           "password == other",
           "password=$PASS password=${PASS}",
           "password=[REDACTED]",
           "AKIAIOSFODNN7EXAMPLEXX",
           "docker run -u 1000:1000 -p 8080:80 image",
           "mysql -u root -p shop",
           "pg_dump --no-password shop",
           "docker login --password-stdin",
           "PWD=/home/user OLDPWD=/tmp",
           "first_pass: done, second_pass: pending",
           "password_hint: ask me, secret_santa_count: 3",
           "AccountName=acct;EndpointSuffix=core.windows.net",
           "hf_transfer is on; ya29 is a prefix; npm_config_cache=/tmp",
           "eyJustSomeWord.here",
           "xoxo hugs",
           "Telegram 12345678:short",
           "SKU-1234 and SKIP",
           "key-value store",
           "Mozilla/5.0 (X11; Linux x86_64)",
           "curl https://example.com/a:b@c",
       }) {
    INFO(s);
    std::string t = s;
    CHECK(redact_string(t) == 0);
    CHECK(t == s);
  }
}

TEST_CASE("look-alikes in non-secret JSON fields stay") {
  json::value doc =
      json::parse(R"({"checksum":"sha256:0f343b0931126a20f133d67c2b018a3b4c5e9d1e6f7a8b9c0d1e2f3a4b5c6d7e",
    "commit":"3f786850e387550fdab836ed7e6dc881de23001b","session_id":"550e8400-e29b-41d4-a716-446655440000",
    "content":"aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0ZXN0","token_usage":{"total":5,"limit":128000},"max_tokens":4096,
    "path":"/home/user/.ssh/id_rsa","url":"https://example.com/x","version":"1.2.3","updated_at":"2025-01-10T10:05:30Z"})",
                  "t");
  json::value before = doc;
  CHECK(redact(doc) == 0);
  CHECK(doc == before);
}

TEST_CASE("pathological input stays linear") {
  for (const std::string& unit :
       std::vector<std::string>{"sk-x://eyJ", "a://b:c/", "curl -u -p ", "M" + std::string(25, 'a') + "."}) {
    std::string s;
    for (int i = 0; i < 100000; ++i) s += unit;
    std::string t = s;
    CHECK(redact_string(t) == 0);
    CHECK(t == s);
  }
}

TEST_CASE("secret member names, carefully") {
  for (const char* n : {"password",        "passwd",       "secret",         "api_key", "apikey",      "access_token",
                        "auth_token",      "private_key",  "client_secret",  "apiKey",  "DB_PASSWORD", "x-api-key",
                        "token",           "github.token", "PGPASSWORD",     "DB_PASS", "MYSQL_PWD",   "AccountKey",
                        "SharedAccessKey", "credentials",  "encryption_key", "smtpPass"})
    CHECK(is_secret_name(n));
  for (const char* n :
       {"token_usage", "token_limit", "max_tokens", "tokens", "secretary", "keyboard", "passwords_file", "name",
        "total", "secret_santa_count", "PWD", "OLDPWD", "first_pass", "bypass", "key", "password_hint", "AccountName"})
    CHECK_FALSE(is_secret_name(n));
}

TEST_CASE("redact walks a document and says where") {
  json::value doc = json::parse(R"({"configuration":{"api_key":"xyz","token_limit":128000,"max_token":"4096"},
    "context":{"token_usage":{"total":5},"conversation_history":[{"content":"use ghp_abcdefghijklmnopqrstuvwxyz0123456789"}]},
    "weird key":{"password":"p"},"empty":{"password":""},"n":{"password":null}})",
                                "t");
  std::vector<std::string> seen;
  CHECK(redact(doc, [&](const std::string& m) { seen.push_back(m); }) == 3);
  CHECK(json::compact(doc) ==
        R"({"configuration":{"api_key":"[REDACTED]","token_limit":128000,"max_token":"4096"},)"
        R"("context":{"token_usage":{"total":5},"conversation_history":[{"content":"use [REDACTED]"}]},)"
        R"("weird key":{"password":"[REDACTED]"},"empty":{"password":""},"n":{"password":null}})");
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == "value of 'api_key' at .configuration.api_key");
  CHECK(seen[1] == "GitHub token at .context.conversation_history[0].content");
  CHECK(seen[2] == "value of 'password' at [\"weird key\"].password");
  // a second pass finds nothing: saves made --from a redacted save stay quiet
  CHECK(redact(doc) == 0);
}

TEST_CASE("numbers under secret names go; token counts stay") {
  json::value doc =
      json::parse(R"({"password":1234,"pin_password":-1.5e3,"token":4096,"max_token":8,"secret":true})", "t");
  std::vector<std::string> seen;
  CHECK(redact(doc, [&](const std::string& m) { seen.push_back(m); }) == 2);
  CHECK(json::compact(doc) ==
        R"({"password":"[REDACTED]","pin_password":"[REDACTED]","token":4096,"max_token":8,"secret":true})");
  CHECK(seen ==
        std::vector<std::string>{"value of 'password' at .password", "value of 'pin_password' at .pin_password"});
}

TEST_CASE("objects and arrays under secret names are redacted deeply, their shape kept") {
  json::value doc = json::parse(
      R"({"credentials":{"user":"bob","pass":"x1","port":5432,"tls":false,"hosts":["a","b"],"note":null},
          "api_keys":[],"apiKey":["k1",{"v":"k2"}],"token":{"value":"abc","expires_in":3600}})",
      "t");
  std::vector<std::string> seen;
  CHECK(redact(doc, [&](const std::string& m) { seen.push_back(m); }) == 8);
  CHECK(json::compact(doc) ==
        R"({"credentials":{"user":"[REDACTED]","pass":"[REDACTED]","port":"[REDACTED]","tls":false,)"
        R"("hosts":["[REDACTED]","[REDACTED]"],"note":null},"api_keys":[],"apiKey":["[REDACTED]",{"v":"[REDACTED]"}],)"
        R"("token":{"value":"[REDACTED]","expires_in":3600}})");
  REQUIRE(seen.size() == 8);
  CHECK(seen[0] == "value of 'credentials' at .credentials.user");
  CHECK(seen[4] == "value of 'credentials' at .credentials.hosts[1]");
  CHECK(seen[6] == "value of 'apiKey' at .apiKey[1].v");
  CHECK(seen[7] == "value of 'token' at .token.value");
}

TEST_CASE("redact_member judges a value by the member it is set to") {
  json::value v = "xyz";
  CHECK(redact_member(v, "api_key", ".configuration.api_key") == 1);
  CHECK(v == "[REDACTED]");
  json::value w = "xyz";
  CHECK(redact_member(w, "name", ".name") == 0);
  json::value n = 1234;
  CHECK(redact_member(n, "password", ".password") == 1);
  CHECK(n == "[REDACTED]");
  json::value o = json::parse(R"({"user":"u","password":"p"})", "t");
  CHECK(redact_member(o, "db_credentials", ".db_credentials") == 2);
}

TEST_CASE("the kinds name the format, never the value") {
  std::vector<std::string> seen;
  json::value v = json::string("a " + std::string("ghp_") + alnum(36) + " and postgres://u:" + alnum(10) +
                               "@h/x and sshpass -p " + alnum(10) + " ssh h");
  redact(v, [&](const std::string& m) { seen.push_back(m); });
  CHECK(seen ==
        std::vector<std::string>{"GitHub token at .", "password in a URL at .", "password on a command line at ."});
}

// ---- issue 22: secrets that went through --redact, and their variants

namespace {
// Nothing of secret is left in red(text), whatever the text around it.
void check_gone(const std::string& text, const std::string& secret) {
  INFO(text);
  const std::string r = red(text);
  CHECK(r.find(secret) == std::string::npos);
  CHECK(r.find(redacted_marker) != std::string::npos);
  CHECK(red(r) == r);
}
}  // namespace

TEST_CASE("issue 22: a multi-line private key under a secret name goes whole, however it is written") {
  const std::string body1 = "MIIEowIBAAKCAQEA" + fake(kBase64, 48), body2 = fake(kBase64, 64);
  for (const std::string label : {"RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PARAMETERS"}) {
    const std::string begin = "-----BEGIN " + label + "-----", end = "-----END " + label + "-----";
    const std::string lines = begin + "\n" + body1 + "\n" + body2 + "\n" + end;
    const std::string escaped = begin + "\\n" + body1 + "\\n" + body2 + "\\n" + end + "\\n";
    for (const std::string& text : std::vector<std::string>{
             "PRIVATE_KEY=\"" + lines + "\"\nNEXT=1", "PRIVATE_KEY='" + lines + "'", "export SSH_KEY=" + lines + "\nls",
             "PRIVATE_KEY=\"" + escaped + "\"", "{\"private_key\": \"" + escaped + "\", \"n\": 1}",
             "{\\\"private_key\\\": \\\"" + escaped + "\\\"}",
             "tls:\n  private_key: |\n    " + begin + "\n    " + body1 + "\n    " + body2 + "\n    " + end +
                 "\n  name: x",
             "secret: " + begin + "\n" + body1 + "\n" + body2,  // truncated: still secret
         }) {
      check_gone(text, body1);
      check_gone(text, body2);
    }
  }
  // what follows the block stays
  CHECK(red("PRIVATE_KEY=\"-----BEGIN X-----\n" + body1 + "\n-----END X-----\"\nNEXT=1") ==
        "PRIVATE_KEY=\"[REDACTED]\"\nNEXT=1");
  CHECK(red("tls:\n  private_key: |\n    " + body1 + "\n    " + body2 + "\n  name: x") ==
        "tls:\n  private_key: |\n    [REDACTED]\n  name: x");
}

TEST_CASE("issue 22: hash, subscript, form and escaped-JSON styles of a secret name") {
  const std::string pw = "hunter2";
  for (const std::string& text : std::vector<std::string>{
           "\"password\" => \"hunter2\"",
           "'password' => 'hunter2', 'user' => 'bob'",
           "{:password => \"hunter2\"}",
           "password => hunter2",
           "password=>hunter2",
           "password[0]=hunter2",
           "password[]=hunter2&x=1",
           "user[password]=hunter2&user[name]=bob",
           "user[\"password\"] = \"hunter2\"",
           "{\\\"password\\\":\\\"hunter2\\\"}",
           "{\\\"password\\\": \\\"hunter2\\\", \\\"user\\\": \\\"bob\\\"}",
           "PASSWORD = \"hunter2\"",
           "Password: hunter2",
           "password := \"hunter2\"",
           "$env:DB_PASSWORD = 'hunter2'",
           "password2=hunter2",
           "DB_PASSWORD_1=hunter2",
           "  db_password:   hunter2  ",
           "connect(host='h', password='hunter2')",
           "https://bob:hunter2@example.com/x",
       })
    check_gone(text, pw);
  CHECK(red("user[password]=hunter2&user[name]=bob") == "user[password]=[REDACTED]&user[name]=bob");
  CHECK(red("\"password\" => \"hunter2\", \"user\" => \"bob\"") ==
        "\"password\" => \"[REDACTED]\", \"user\" => \"bob\"");
}

TEST_CASE("issue 22: names ending in _KEY are secret, keys of other things are not") {
  const std::string v = alnum(32);
  for (const std::string name : {"AZURE_STORAGE_KEY", "OPENAI_KEY", "ANTHROPIC_KEY", "STRIPE_KEY", "MAPBOX_KEY",
                                 "stripeKey", "ssh-key", "LICENSE_KEY", "gpg_key", "SESSION_KEY", "OPENAI_KEY_2"}) {
    INFO(name);
    CHECK(is_secret_name(name));
    check_gone(name + "=" + v, v);
    check_gone("export " + name + "='" + v + "'", v);
    check_gone("{\"" + name + "\": \"" + v + "\"}", v);
    check_gone(name + ": " + v, v);
  }
  for (const std::string name : {"key", "KEY", "sort_key", "primaryKey", "partition_key", "public_key", "PUBLIC_KEY",
                                 "STRIPE_PUBLISHABLE_KEY", "cache_key", "foreign_key", "config.key", "weird key",
                                 "keyboard", "key_id", "AWS_ACCESS_KEY_ID", "i18n_key", "_key", "1_key"}) {
    INFO(name);
    CHECK_FALSE(is_secret_name(name));
    std::string t = name + "=created_at";
    CHECK(redact_string(t) == 0);
  }
  json::value doc = json::parse(R"({"OPENAI_KEY":"abc","sort_key":"created_at","public_key":"ssh-ed25519 AAAA"})", "t");
  CHECK(redact(doc) == 1);
  CHECK(json::compact(doc) == R"({"OPENAI_KEY":"[REDACTED]","sort_key":"created_at","public_key":"ssh-ed25519 AAAA"})");
}

TEST_CASE("issue 22: headers, URLs and well-known token shapes, as an attacker writes them") {
  const std::string t40 = alnum(40);
  for (const auto& [text, secret] : std::vector<std::pair<std::string, std::string>>{
           {"curl -H 'Authorization: Bearer " + t40 + "' https://x", t40},
           {"-H \"authorization: bearer " + t40 + "\"", t40},
           {"Authorization: token " + t40, t40},
           {"Proxy-Authorization: Basic " + fake(kBase64, 20), ""},
           {"{\"headers\": {\"Authorization\": \"Bearer " + t40 + "\"}}", t40},
           {"X-Auth-Token: " + t40, t40},
           {"PRIVATE-TOKEN: " + t40, t40},
           {"git clone https://oauth2:" + t40 + "@gitlab.com/g/r.git", t40},
           {"amqp://guest:" + t40 + "@rabbit:5672/", t40},
           {"token=ghp_" + alnum(36), "ghp_"},
           {"(ghp_" + alnum(36) + ")", "ghp_"},
           {"\"xoxb-" + alnum(12) + "-" + alnum(24) + "\"", "xoxb-"},
           {"aws_access_key_id=AKIA" + fake(kUpper, 16), "AKIA"},
           {"key: 'AKIA" + fake(kUpper, 16) + "'", "AKIA"},
           {"OPENAI_API_KEY=sk-proj-" + word(60), "sk-proj-"},
           {"auth=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOi" + alnum(20) + "." + word(30), "eyJhbGciOiJIUzI1NiJ9"},
       }) {
    INFO(text);
    std::string r = red(text);
    CHECK(r.find(redacted_marker) != std::string::npos);
    if (!secret.empty()) CHECK(r.find(secret) == std::string::npos);
    CHECK(red(r) == r);
  }
}

TEST_CASE("issue 22: code and comparisons under secret names stay") {
  for (const std::string& s : std::vector<std::string>{
           "password = getpass()",
           "password = os.environ[\"DB_PASSWORD\"]",
           "token = tokens[0]",
           "if password == other:",
           "password != confirm",
           "len(password) >= 8",
           "password=\"$DB_PASSWORD\" token=${TOKEN}",
           "\"sort_key\": \"created_at\", \"partitionKey\": \"/id\"",
           "the password field: see docs",
           "key: value, KEY=1",
           "secret_santa_count: 3",
       }) {
    INFO(s);
    std::string t = s;
    CHECK(redact_string(t) == 0);
    CHECK(t == s);
  }
}

TEST_CASE("issue 22: pathological inputs of the new matchers stay linear") {
  for (const std::string& unit :
       std::vector<std::string>{"]=", "password=$", "password=\\\"$", "a_key: |\n", "-----BEGIN x\n", "p[password]=$",
                                "password=>$", "<api_key>", "password '$", "identified by \"$"}) {
    std::string s;
    for (int i = 0; i < 50000; ++i) s += unit;
    std::string t = s;
    redact_string(t);
    CHECK(red(t) == t);
  }
}

TEST_CASE("issue 22: what fuzz-redact found: one call redacts all a second would") {
  // tests/fuzz/findings/redact/: a URL under a secret name, and a curl
  // password whose text holds a secret name's assignment
  for (const std::string& s :
       std::vector<std::string>{"{\"note\":\"password://u:p@h7db\"}", "curl -ueApass?ord[0GE_KEY=blic_key:x1 https://h",
                                "curl -u bob:api_key=x2 https://h"}) {
    INFO(s);
    const std::string once = red(s);
    CHECK(once != s);
    CHECK(red(once) == once);
  }
  CHECK(red("password://u:p@h/db x") == "password:[REDACTED] x");
}

TEST_CASE("issue 22: XML elements and SQL passwords") {
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"<server><id>x</id><password>hunter2</password></server>",
            "<server><id>x</id><password>[REDACTED]</password></server>"},
           {"<ns:client_secret>\n  s3cr3t\n</ns:client_secret>",
            "<ns:client_secret>\n  [REDACTED]\n</ns:client_secret>"},
           {"<ApiKey>abc</ApiKey>", "<ApiKey>[REDACTED]</ApiKey>"},
           {"CREATE USER app WITH PASSWORD 'hunter2';", "CREATE USER app WITH PASSWORD '[REDACTED]';"},
           {"ALTER ROLE app password \"hunter2\"", "ALTER ROLE app password \"[REDACTED]\""},
           {"CREATE USER 'a'@'%' IDENTIFIED BY 'hunter2';", "CREATE USER 'a'@'%' IDENTIFIED BY '[REDACTED]';"},
       }) {
    CHECK(red(text) == want);
    CHECK(red(want) == want);
  }
  for (const std::string& s : std::vector<std::string>{
           "SyntaxError: Unexpected token '<' in JSON", "<password_hint>ask me</password_hint>",
           "<token_count>5</token_count>", "<key>name</key>", "<password></password>",
           "<password>${DB_PASSWORD}</password>", "ordered by 'name'", "<password>", "a > b and password > 3"}) {
    INFO(s);
    std::string t = s;
    CHECK(redact_string(t) == 0);
    CHECK(t == s);
  }
}

TEST_CASE("issue 22: a quoted value ends at its line's end, even after a backslash") {
  const std::string body = fake(kBase64, 48);
  const std::string text =
      "TOKEN=\"abc\\\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\n";
  CHECK(red(text) == "TOKEN=\"[REDACTED]\n[REDACTED]\n");
}
