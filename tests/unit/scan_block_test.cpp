// lib/sys/base/scan_block.hpp (the 16-byte steps of the scan) and the scan at
// the edges of those steps: every special byte at every offset of the
// first blocks, and texts that end exactly where readable memory ends (a mapped
// file has nothing after its last byte; a page that is not mapped follows
// the text here, so a read past the end is a crash, not a silent pass).
#include <catch2/catch.hpp>

#include <random>
#include <sys/mman.h>
#include <unistd.h>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "core/scan/scan.hpp"
#include "sys/base/scan_block.hpp"
#include "sys/base/error.hpp"

using namespace loopkit;
using namespace loopkit::scan::detail;

namespace {

// what each step should find, byte by byte
bool stops_string(unsigned char c) { return c == '"' || c == '\\' || c < 0x20 || c >= 0x80; }
unsigned stops_by_bytes(const unsigned char* s) {
  unsigned m = 0;
  for (unsigned i = 0; i < 16; ++i) m |= stops_string(s[i]) ? 1u << i : 0;
  return m;
}
unsigned blanks_by_bytes(const unsigned char* s) {
  unsigned k = 0;
  while (k < 16 && (s[k] == ' ' || s[k] == '\n')) ++k;
  return k;
}
unsigned digits_by_bytes(const unsigned char* s) {
  unsigned k = 0;
  while (k < 8 && s[k] >= '0' && s[k] <= '9') ++k;
  return k;
}

void check_steps(const unsigned char* s) {
  REQUIRE(string_stops16(s) == stops_by_bytes(s));
  REQUIRE(string_stops16_swar(s) == stops_by_bytes(s));
  REQUIRE(blank16(s) == blanks_by_bytes(s));
  REQUIRE(blank16_swar(s) == blanks_by_bytes(s));
  REQUIRE(digits8(s) == digits_by_bytes(s));
}

// Text copied so that its last byte is the last readable byte: the page
// after it is mapped with no access. One arena serves every text.
std::string_view at_fence(std::string_view text) {
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  static const std::size_t room = 16 * page;
  static char* const base = [] {
    void* m = mmap(nullptr, room + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(m != MAP_FAILED);
    REQUIRE(mprotect(static_cast<char*>(m) + room, page, PROT_NONE) == 0);
    return static_cast<char*>(m);
  }();
  REQUIRE(text.size() <= room);
  char* at = base + room - text.size();
  std::memcpy(at, text.data(), text.size());
  return {at, text.size()};
}

// "ok" or the failure's code and message: the scan of the text at the
// fence, and json::parse of a copy
std::string verdict_at_fence(const std::string& text, const char* path = nullptr) {
  std::string_view fenced = at_fence(text);
  try {
    scan::Want w;
    if (path) w.add(parse_path(path));
    w.settle();
    scan::scan(fenced, w, "t.json");
    return "ok";
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
}
std::string verdict_of_parse(const std::string& text) {
  try {
    json::parse(text, "t.json");
    return "ok";
  } catch (const Error& e) {
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
  }
}

void same_verdict(const std::string& text) {
  INFO(text);
  std::string want = verdict_of_parse(text);
  REQUIRE(verdict_at_fence(text) == want);
  REQUIRE(verdict_at_fence(text, ".a") == want);  // the walk of a wanted container, then skip
  REQUIRE(verdict_at_fence(text, "[0]") == want);
}

}  // namespace

TEST_CASE("the block steps find what a byte-by-byte reading finds") {
  unsigned char s[16];
  // each byte value at each place, among plain bytes of each kind
  for (unsigned char fill : {'a', ' ', '5', '\n'}) {
    for (unsigned at = 0; at < 16; ++at) {
      for (unsigned v = 0; v < 256; ++v) {
        std::memset(s, fill, sizeof s);
        s[at] = static_cast<unsigned char>(v);
        INFO(static_cast<int>(fill) << " " << at << " " << v);
        check_steps(s);
      }
    }
  }
  // random blocks of the bytes that matter, next to one another
  const unsigned char pool[] = {'"',  '\\', ' ', '\n', '\t', 0x00, 0x1f, 0x20, 0x21, 0x7f, 0x80, 0xbf,
                                0xc2, 0xff, '0', '9',  '/',  ':',  'a',  0x3a, 0x2f, 0xfa, 0xfe, 0x01};
  std::mt19937 rng(24);
  for (int round = 0; round < 200000; ++round) {
    for (auto& c : s) c = pool[rng() % sizeof pool];
    check_steps(s);
  }
}

TEST_CASE("special bytes at every offset of the first blocks, in a text that ends at the fence") {
  // one a line: quotes, escapes (good and bad), control bytes, UTF-8 (good, cut, overlong, surrogate, too high)
  const char* specials[] = {
      "\"",
      "\\\"",
      "\\\\",
      "\\n",
      "\\u00e9",
      "\\ud83d\\ude00",
      "\\x",
      "\\u12",
      "\\ud800",
      "\x01",
      "\x1f",
      "\x7f",
      "\xc3\xa9",
      "\xe2\x82\xac",
      "\xf0\x9f\x98\x80",
      "\xc3",
      "\xe2\x82",
      "\xc0\xaf",
      "\xed\xa0\x80",
      "\xf4\x90\x80\x80",
      "\xff",
      "\x80",
  };
  for (int lead : {0, 1, 7, 15}) {
    // the 16 bytes of a short string, the 32 of a string value read inline,
    // then the 32-byte steps of a long one
    for (int off = 0; off < 72; ++off) {
      for (const char* sp : specials) {
        // the string closes right after, or some bytes later, or never
        for (int tail : {0, 1, 17}) {
          std::string body = std::string(static_cast<std::size_t>(off), 'x') + sp + std::string(tail, 'y');
          std::string s = "\"" + body + "\"";
          std::string pad(static_cast<std::size_t>(lead), ' ');
          same_verdict(pad + s);
          same_verdict(pad + "{\"a\": [" + s + "]}");
          same_verdict(pad + "[" + s + ", {\"k\": " + s + "}]");
          same_verdict(pad + "\"" + body);  // cut short at the fence
        }
      }
    }
  }
}

TEST_CASE("tokens that end exactly at the end of the text") {
  std::vector<std::string> tails = {"0",       "-0",      "12345678", "123456789012345678",
                                    "-1.5",    "1.25e-3", "1e5",      "1E+9",
                                    "-",       "1.",      "1e",       "01",
                                    "true",    "tru",     "null",     "fals",
                                    "\"\"",    "\"abc",   "\"a\\\"",  "\"\\u00",
                                    "[]",      "[",       "{}",       "{\"a\"",
                                    "{\"a\":", "[1,",     "[1"};
  for (const std::string& t : tails) {
    for (int lead = 0; lead < 40; ++lead) {
      std::string pad(static_cast<std::size_t>(lead), lead % 3 ? ' ' : '\n');
      same_verdict(pad + t);
      same_verdict("[" + pad + t);
      same_verdict("{\"a\": [" + pad + t);
      same_verdict("{\"a\":" + pad + t + "}");
      same_verdict("[" + pad + t + "]" + pad);
    }
  }
  // whitespace up to the fence, of every length, after a whole document
  for (int n = 0; n < 40; ++n) {
    same_verdict("{\"a\": 1}" + std::string(static_cast<std::size_t>(n), ' '));
    same_verdict("[1" + std::string(static_cast<std::size_t>(n), '\n'));
    same_verdict("[1," + std::string(static_cast<std::size_t>(n), ' ') + "\t");
  }
}
