// libFuzzer target: the redactor (lib/core/redact/redact.hpp). The input is any
// text; its first byte also picks a secret to plant. Properties: nothing
// leaves redact_string but a count; a count of 0 leaves the text as it was;
// a redacted text holds nothing more to redact (a second pass changes
// nothing); a known secret planted on a line of its own anywhere in the
// text never survives; on a JSON document, redact keeps the shape (members,
// array lengths, true/false/null) and a second pass finds nothing.
#include <string>
#include <string_view>

#include "core/redact/redact.hpp"
#include "fuzz_common.hpp"

using namespace loopkit;

namespace {

// n characters of alphabet, drawn from the input's bytes (so that libFuzzer
// varies the secret too); made at run time, never a real credential
std::string draw(std::string_view alphabet, std::size_t n, std::string_view bytes) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char b = bytes.empty() ? static_cast<unsigned char>(i * 7) : bytes[i % bytes.size()];
    s += alphabet[(b + i * 31) % alphabet.size()];
  }
  return s;
}

struct Planted {
  std::string text;    // what goes on its own line
  std::string secret;  // what must not survive
};

Planted plant(unsigned char pick, std::string_view bytes) {
  constexpr std::string_view alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  constexpr std::string_view upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  constexpr std::string_view word = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
  const std::string a = draw(alnum, 40, bytes), w = draw(word, 48, bytes);
  switch (pick % 9) {
    case 0: return {"ghp_" + a.substr(0, 36), "ghp_" + a.substr(0, 36)};
    case 1: return {"xoxb-1234567890-" + a.substr(0, 24), "xoxb-1234567890-" + a.substr(0, 24)};
    case 2: return {"AKIA" + draw(upper, 16, bytes), "AKIA" + draw(upper, 16, bytes)};
    case 3: return {"sk-proj-" + w, "sk-proj-" + w};
    case 4: {
      std::string jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIi" + a.substr(0, 20) + "." + w.substr(0, 30);
      return {jwt, jwt};
    }
    case 5: return {"DB_PASSWORD=pw" + a.substr(0, 12), "pw" + a.substr(0, 12)};
    case 6: return {"postgres://app:pw" + a.substr(0, 12) + "@db/x", "pw" + a.substr(0, 12)};
    case 7: {
      std::string body = "MIIEow" + draw("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 48, bytes);
      return {"-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----", body};
    }
    default: return {"OPENAI_KEY: '" + a + "'", a};
  }
}

std::string redacted(std::string s, std::size_t& count) {
  count = redact_string(s);
  return s;
}

void check_text(std::string_view in) {
  std::size_t n = 0, again = 0;
  const std::string once = redacted(std::string(in), n);
  fuzz::check(n > 0 || once == in, "a count of 0, yet the text changed");
  fuzz::check(n == 0 || once.find(redacted_marker) != std::string::npos, "a count, yet no marker");
  const std::string twice = redacted(once, again);
  fuzz::check(again == 0 && twice == once, "a second pass redacted more: '" + once + "' became '" + twice + "'");
}

std::size_t occurrences(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void check_planted(std::string_view in) {
  if (in.empty()) return;
  const std::string_view rest = in.substr(1);
  const std::size_t at = rest.empty() ? 0 : static_cast<unsigned char>(in[0]) * rest.size() / 256;
  const Planted p = plant(static_cast<unsigned char>(in[0]), rest);
  std::string text = std::string(rest.substr(0, at)) + "\n" + p.text + "\n" + std::string(rest.substr(at));
  std::size_t n = 0;
  const std::string out = redacted(text, n);
  // the text around may hold the same characters (libFuzzer copies them): only more is a finding
  fuzz::check(occurrences(out, p.secret) <= occurrences(rest, p.secret),
              "a planted secret survived: " + p.secret + " in '" + out + "'");
}

// The shape a reader relies on: the same members and array lengths, and
// true, false and null where they were; strings and numbers may be markers.
bool same_shape(const json::value& a, const json::value& b) {
  if (b.is_string() && b.get_string() == redacted_marker) return a.is_string() || a.is_number();
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const auto &x = a.get_array(), &y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!same_shape(x[i], y[i])) return false;
  } else if (a.is_object()) {
    const auto &x = a.get_object(), &y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& kv : x) {
      const json::value* other = y.if_contains(kv.key());
      if (!other || !same_shape(kv.value(), *other)) return false;
    }
  } else if (!a.is_string()) {
    return a == b;
  }
  return true;
}

void check_document(std::string_view in) {
  json::value doc;
  try {
    doc = json::parse(in, "fuzz");
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "json::parse");
    return;
  }
  const json::value before = doc;
  redact(doc, [](const std::string& what) { fuzz::check(!what.empty(), "an empty description"); });
  fuzz::check(same_shape(before, doc),
              "redact changed the shape: " + json::compact(before) + " -> " + json::compact(doc));
  const json::value once = doc;
  fuzz::check(redact(doc) == 0 && doc == once, "a second redact found more in " + json::compact(once));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_text(text);
  check_planted(text);
  check_document(text);
  return 0;
}
