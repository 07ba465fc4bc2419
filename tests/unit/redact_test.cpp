// lib/core/redact: each secret kind goes, ordinary text and token counts stay.
#include <catch2/catch.hpp>

#include "core/redact.hpp"

using namespace loopkit;

static std::string red(std::string s) {
  redact_string(s);
  return s;
}

TEST_CASE("provider API keys are redacted") {
  CHECK(red("key sk-abcdefghijklmnopqrstuvwxyz0123456789 ok") == "key [REDACTED] ok");
  CHECK(red("sk-proj-Ab_Cd-EfGhIjKlMnOpQrStUvWx") == "[REDACTED]");
  CHECK(red("ANTHROPIC=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz") == "ANTHROPIC=[REDACTED]");
  CHECK(red(" AIzaSyA1234567890abcdefghijklmnopqrstu.") == " [REDACTED].");
  CHECK(red("sk_live_1234567890abcdefXYZ rk_live_1234567890abcdefXYZ") == "[REDACTED] [REDACTED]");
}

TEST_CASE("GitHub, Slack and AWS credentials are redacted") {
  for (const char* p : {"ghp_", "gho_", "ghu_", "ghs_", "ghr_"})
    CHECK(red(std::string("t=") + p + "abcdefghijklmnopqrstuvwxyz0123456789,") == "t=[REDACTED],");
  CHECK(red("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz") == "[REDACTED]");
  for (const char* p : {"xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xapp-"})
    CHECK(red(std::string(p) + "1234567890-abcdef") == "[REDACTED]");
  CHECK(red("AKIAIOSFODNN7EXAMPLE and ASIAIOSFODNN7EXAMPLE") == "[REDACTED] and [REDACTED]");
}

TEST_CASE("bearer tokens keep the word Bearer") {
  CHECK(red("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc") == "Authorization: Bearer [REDACTED]");
  CHECK(red("bearer  abcd1234efgh") == "bearer  [REDACTED]");
}

TEST_CASE("a private-key block goes whole, even when truncated") {
  CHECK(red("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\nNzaC1\n-----END OPENSSH PRIVATE KEY-----\nz") ==
        "a\n[REDACTED]\nz");
  CHECK(red("-----BEGIN PRIVATE KEY-----\nMIIE") == "[REDACTED]");
  CHECK(red("-----BEGIN CERTIFICATE-----\nMIIE\n-----END CERTIFICATE-----") ==
        "-----BEGIN CERTIFICATE-----\nMIIE\n-----END CERTIFICATE-----");
}

TEST_CASE("password assignments lose their value, not their name") {
  CHECK(red("password=hunter2 next") == "password=[REDACTED] next");
  CHECK(red("passwd: hunter2") == "passwd: [REDACTED]");
  CHECK(red("{\"api_key\": \"abc def\", \"n\": 1}") == "{\"api_key\": \"[REDACTED]\", \"n\": 1}");
  CHECK(red("DB_PASSWORD='x y' secret=s token=t1 client_secret=c") ==
        "DB_PASSWORD='[REDACTED]' secret=[REDACTED] token=[REDACTED] client_secret=[REDACTED]");
  CHECK(red("dbPassword=x") == "dbPassword=[REDACTED]");
}

TEST_CASE("passwords in URLs and JSON web tokens are redacted") {
  CHECK(red("DATABASE_URL=postgres://app:s3cr3t@db:5432/x") == "DATABASE_URL=postgres://app:[REDACTED]@db:5432/x");
  CHECK(red("https://example.com:8080/a@b") == "https://example.com:8080/a@b");
  CHECK(red("t eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U x") ==
        "t [REDACTED] x");
  CHECK(red("eyJustSomeWord.here") == "eyJustSomeWord.here");
}

TEST_CASE("authorization values lose their credentials, not their scheme") {
  CHECK(red("Authorization: Basic dXNlcjpwYXNz") == "Authorization: Basic [REDACTED]");
  CHECK(red("authorization=abc123") == "authorization=[REDACTED]");
  CHECK(is_secret_name("Authorization"));
}

TEST_CASE("pathological input stays linear") {
  std::string s;
  for (int i = 0; i < 100000; ++i) s += "sk-x://eyJ";
  std::string t = s;
  CHECK(redact_string(t) == 0);
  CHECK(t == s);
}

TEST_CASE("ordinary text is left alone") {
  for (const char* s :
       {"token_usage: 5, token_limit=128000, max_tokens=4096", "the bearer of bad news", "Bearer authentication",
        "task-force sk-learn desk-lamp", "cat /etc/passwd: no such file", "password == other", "password=$PASS",
        "password=[REDACTED]", "AKIAIOSFODNN7EXAMPLEXX", "2025-01-10T10:05:30Z", "https://example.com:8080/a?b=c",
        "token=4096"}) {
    std::string t = s;
    CHECK(redact_string(t) == 0);
    CHECK(t == s);
  }
}

TEST_CASE("secret member names, carefully") {
  for (const char* n : {"password", "passwd", "secret", "api_key", "apikey", "access_token", "auth_token",
                        "private_key", "client_secret", "apiKey", "DB_PASSWORD", "x-api-key", "token", "github.token"})
    CHECK(is_secret_name(n));
  for (const char* n : {"token_usage", "token_limit", "max_tokens", "tokens", "secretary", "keyboard", "passwords_file",
                        "name", "total", "secret_santa_count"})
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

TEST_CASE("redact_member judges a value by the member it is set to") {
  json::value v = "xyz";
  CHECK(redact_member(v, "api_key", ".configuration.api_key") == 1);
  CHECK(v == "[REDACTED]");
  json::value w = "xyz";
  CHECK(redact_member(w, "name", ".name") == 0);
}
