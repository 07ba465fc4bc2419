// lib/sys/gz/inflate and crc32 through gunzip (issue 24): what zlib's deflate
// writes at every level and strategy reads back, and on every damaged
// stream gunzip does what zlib's inflate does (gunzip_reference.hpp).
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "gunzip_reference.hpp"
#include "sys/gz/crc32.hpp"
#include "sys/base/error.hpp"
#include "sys/gz/gz.hpp"
#include "sys/gz/inflate.hpp"

using namespace loopkit;

namespace {

struct Outcome {
  Ref ref;
  std::string out;
  bool operator==(const Outcome& o) const { return ref == o.ref && (ref != Ref::ok || out == o.out); }
};

Outcome ours(std::string_view in, std::size_t limit) {
  try {
    return {Ref::ok, gunzip(in, "t.gz", limit)};
  } catch (const Error& e) {
    REQUIRE(e.code() == Exit::data);
    std::string m = e.what();
    if (m == "'t.gz': corrupt gzip data") return {Ref::corrupt, {}};
    REQUIRE(m.find("'t.gz': gzip data inflates past ") == 0);
    return {Ref::too_big, {}};
  }
}

Outcome zlibs(std::string_view in, std::size_t limit) {
  std::string out;
  Ref r = zlib_gunzip(in, out, limit);
  return {r, out};
}

// gunzip agrees with zlib on in; returns what they agreed on
Ref agree(std::string_view in, std::size_t limit = std::size_t(1) << 24) {
  Outcome a = ours(in, limit), b = zlibs(in, limit);
  INFO("input of " << in.size() << " bytes, limit " << limit);
  CHECK(int(a.ref) == int(b.ref));
  if (a.ref == Ref::ok && b.ref == Ref::ok) CHECK(a.out == b.out);
  return b.ref;
}

// raw deflate data: the same outcome, the same bytes written before it
// (no CRC here to hide a wrong one), the same end
void agree_raw(std::string_view in, std::size_t limit = std::size_t(1) << 24) {
  std::string got, want;
  std::size_t at = 0, used = 0;
  Inflated r = inflate_raw(in, at, got, limit);
  Ref ref = zlib_inflate_raw(in, want, limit, used);
  INFO("raw input of " << in.size() << " bytes, limit " << limit);
  REQUIRE(int(r) == int(ref));
  if (r != Inflated::past_limit) CHECK(got == want);
  if (r == Inflated::ok) CHECK(at == used);
}

std::string le32(std::uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s += static_cast<char>(v >> (8 * i));
  return s;
}

// a member around raw deflate data, its trailer for plain
std::string member(std::string_view raw, std::string_view plain, std::string header = {}) {
  if (header.empty()) header = std::string("\x1f\x8b\x08\x00\0\0\0\0\x00\x03", 10);
  return header + std::string(raw) + le32(gzip_crc32(plain)) + le32(static_cast<std::uint32_t>(plain.size()));
}

// texts that take each kind of match: JSON, noise, runs, short periods,
// more than a stored block (65535) holds
std::vector<std::string> samples() {
  std::mt19937 rng(24);
  std::string json, noise, periods;
  for (int i = 0; i < 3000; ++i)
    json += "{\"seq\":" + std::to_string(i) + ",\"id\":\"" + std::to_string(rng()) + "\",\"ok\":true}\n";
  for (int i = 0; i < 70000; ++i) noise += static_cast<char>(rng());
  for (int p = 2; p < 12; ++p)
    for (int i = 0; i < 500; ++i) periods += static_cast<char>('a' + i % p);
  return {"", "x", json, noise, std::string(100000, ' '), periods, json + noise + json};
}

}  // namespace

TEST_CASE("gunzip reads what zlib writes at every level and strategy", "[gz][inflate]") {
  for (const std::string& s : samples()) {
    CHECK(gunzip(gzip(s), "t.gz") == s);
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED})
      for (int level = 0; level <= 9; ++level) {
        INFO("level " << level << ", strategy " << strategy << ", " << s.size() << " bytes");
        CHECK(gunzip(zlib_deflate(s, level, strategy), "t.gz") == s);
      }
  }
}

TEST_CASE("members of every kind read one after another, trailing zeros ignored", "[gz][inflate]") {
  std::string all, want;
  int n = 0;
  for (const std::string& s : samples()) {
    all += zlib_deflate(s, n % 10, n % 2 ? Z_FIXED : Z_DEFAULT_STRATEGY) + gzip("");
    want += s;
    ++n;
  }
  CHECK(gunzip(all, "t.gz") == want);
  CHECK(gunzip(all + std::string(1000, '\0'), "t.gz") == want);
  CHECK(agree(all + std::string(10, '\0') + "\x01") == Ref::corrupt);  // not only zeros
  CHECK(agree(all + std::string(3, '\0') + gzip("a")) == Ref::corrupt);
  // a member's matches reach back only into the member
  std::string raw = zlib_deflate("abcdefgh", 9, Z_DEFAULT_STRATEGY, -15);
  CHECK(agree(gzip("abcdefgh") + member(raw, "abcdefgh")) == Ref::ok);
}

TEST_CASE("a header with every flag is read; its CRC, method and reserved flags are checked", "[gz][inflate]") {
  std::string plain = "with every flag\n", raw = zlib_deflate(plain, 6, Z_DEFAULT_STRATEGY, -15);
  // FTEXT FHCRC FEXTRA FNAME FCOMMENT
  std::string h = std::string("\x1f\x8b\x08\x1f\x01\x02\x03\x04\x00\x03", 10) + std::string("\x05\x00xx\0yy", 7) +
                  std::string("name.json\0", 10) + std::string("a comment\0", 10);
  std::uint32_t hcrc = gzip_crc32(h);
  std::string full = member(raw, plain, h + static_cast<char>(hcrc) + static_cast<char>(hcrc >> 8));
  CHECK(gunzip(full, "t.gz") == plain);
  CHECK(agree(full) == Ref::ok);
  std::string bad_hcrc = full;
  bad_hcrc[h.size()] ^= 1;
  CHECK(agree(bad_hcrc) == Ref::corrupt);
  for (char reserved : {'\x20', '\x40', '\x80'}) {
    std::string r = member(raw, plain);
    r[3] = reserved;
    CHECK(agree(r) == Ref::corrupt);
  }
  std::string method = member(raw, plain);
  method[2] = 7;
  CHECK(agree(method) == Ref::corrupt);
  // a zlib stream (RFC 1950) is not gzip, as for gzip -d
  CHECK(agree(zlib_deflate(plain, 6, Z_DEFAULT_STRATEGY, 15)) == Ref::corrupt);
  CHECK(agree(gzip(plain) + zlib_deflate(plain, 6, Z_DEFAULT_STRATEGY, 15)) == Ref::corrupt);
  // cut at every byte, the header's fields too
  for (std::size_t i = 0; i < full.size(); ++i) CHECK(agree(full.substr(0, i)) == Ref::corrupt);
}

TEST_CASE("a wrong CRC-32 or size in the trailer is corrupt", "[gz][inflate]") {
  std::string g = gzip("some text to check\n");
  for (std::size_t i = g.size() - 8; i < g.size(); ++i) {
    std::string bad = g;
    bad[i] ^= 0x10;
    CHECK(agree(bad) == Ref::corrupt);
  }
  CHECK(gzip_crc32("123456789") == 0xcbf43926u);  // the check value of CRC-32/ISO-HDLC
  CHECK(gzip_crc32("56789", gzip_crc32("1234")) == 0xcbf43926u);
}

TEST_CASE("streams cut at every byte are corrupt, as zlib finds them", "[gz][inflate]") {
  std::string text = samples()[2].substr(0, 3000);
  for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY})
    for (int level : {0, 1, 9}) {
      std::string g = zlib_deflate(text, level, strategy);
      for (std::size_t i = 0; i < g.size(); ++i) CHECK(agree(g.substr(0, i)) == Ref::corrupt);
    }
}

TEST_CASE("every flipped bit of small streams: gunzip does what zlib's inflate does", "[gz][inflate]") {
  std::string text = samples()[2].substr(0, 600) + samples()[5].substr(0, 200);
  for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED, Z_RLE}) {
    std::string g = zlib_deflate(text, strategy == Z_RLE ? 0 : 6, strategy) + gzip("tail");
    for (std::size_t bit = 0; bit < g.size() * 8; ++bit) {
      std::string bad = g;
      bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
      agree(bad);
      agree(bad, 700);  // the limit reached before, at or after the damage
    }
  }
  for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED}) {
    std::string raw = zlib_deflate(text, 6, strategy, -15) + "after";
    for (std::size_t bit = 0; bit < raw.size() * 8; ++bit) {
      std::string bad = raw;
      bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
      agree_raw(bad);
    }
  }
  // and several at once, on the stream with dynamic codes
  std::mt19937 rng(7);
  std::string g = zlib_deflate(text, 9, Z_DEFAULT_STRATEGY);
  for (int i = 0; i < 3000; ++i) {
    std::string bad = g;
    for (int k = 0; k < 3; ++k) bad[10 + rng() % (g.size() - 18)] ^= static_cast<char>(1 << (rng() % 8));
    agree(bad);
    agree_raw(bad.substr(10));
  }
}

TEST_CASE("the limit: exactly at it reads, one byte past it fails, as zlib's buffer of limit + 1 finds",
          "[gz][inflate]") {
  std::string text = samples()[2].substr(0, 5000);
  for (int level : {0, 1, 9}) {
    std::string g = zlib_deflate(text, level, Z_DEFAULT_STRATEGY) + gzip(text);
    for (std::size_t limit = 4990; limit <= 5010; ++limit) CHECK(agree(g, limit) == Ref::too_big);
    for (std::size_t limit = 9990; limit <= 10010; ++limit)
      CHECK(agree(g, limit) == (limit < 10000 ? Ref::too_big : Ref::ok));
    // cut short past the limit: the limit is what zlib reports
    CHECK(agree(g.substr(0, g.size() - 20), 5000) == Ref::too_big);
  }
}

namespace {

// deflate's bits written by hand, least significant first; Huffman codes
// most significant bit first (RFC 1951 3.1.1)
struct BitWriter {
  std::string out;
  unsigned acc = 0, n = 0;
  BitWriter& bits(unsigned v, unsigned count) {
    for (unsigned i = 0; i < count; ++i) {
      acc |= ((v >> i) & 1) << n;
      if (++n == 8) flush();
    }
    return *this;
  }
  BitWriter& code(unsigned c, unsigned len) {
    for (unsigned i = len; i-- > 0;) bits((c >> i) & 1, 1);
    return *this;
  }
  void flush() {
    out += static_cast<char>(acc);
    acc = n = 0;
  }
  std::string done() {
    if (n) flush();
    return out;
  }
};

// fixed codes: literal/length symbols, then a distance code of 5 bits
void fixed(BitWriter& w, unsigned sym) {
  if (sym < 144) w.code(0x30 + sym, 8);
  else if (sym < 256) w.code(0x190 + sym - 144, 9);
  else if (sym < 280) w.code(sym - 256, 7);
  else w.code(0xc0 + sym - 280, 8);
}

// A dynamic block's header whose code length code gives 4 bits to 0..12
// and 16..18 (the canonical codes 0..15 in that order), then the code
// length symbols (with their extra bits) as given.
struct Dynamic {
  unsigned nlit = 257, ndist = 1;
  std::vector<std::pair<unsigned, unsigned>> lens;  // symbol, extra bits' value
  Dynamic& lengths(std::initializer_list<unsigned> ls) {
    for (unsigned l : ls) lens.push_back({l, 0});
    return *this;
  }
  Dynamic& zeros(unsigned count) {  // 18 (11 to 138), then 0s
    for (; count >= 11; count -= std::min(count, 138u)) lens.push_back({18, std::min(count, 138u) - 11});
    for (; count > 0; --count) lens.push_back({0, 0});
    return *this;
  }
  BitWriter write(bool last = true) const {
    static const unsigned kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    BitWriter w;
    w.bits(last, 1).bits(2, 2).bits(nlit - 257, 5).bits(ndist - 1, 5).bits(15, 4);
    for (unsigned s : kOrder) w.bits(s <= 12 || s >= 16 ? 4 : 0, 3);
    for (auto [sym, extra] : lens) {
      w.code(sym <= 12 ? sym : sym - 3, 4);
      if (sym >= 16) w.bits(extra, sym == 16 ? 2 : sym == 17 ? 3 : 7);
    }
    return w;
  }
};

Ref raw(const std::string& deflate, std::string_view plain = {}) { return agree(member(deflate, plain)); }

}  // namespace

TEST_CASE("hand-made blocks: each invalid thing zlib refuses is refused, what it takes is taken", "[gz][inflate]") {
  CHECK(raw(BitWriter().bits(1, 1).bits(3, 2).done()) == Ref::corrupt);  // block type 3
  BitWriter stored = BitWriter().bits(1, 1).bits(0, 2);
  stored.flush();
  CHECK(raw(stored.out + std::string("\x03\x00\xfc\xff", 4) + "abc", "abc") == Ref::ok);
  CHECK(raw(stored.out + std::string("\x03\x00\xfc\xfe", 4) + "abc", "abc") == Ref::corrupt);  // NLEN
  for (unsigned sym : {286u, 287u}) {
    BitWriter w = BitWriter().bits(1, 1).bits(1, 2);
    fixed(w, sym);
    CHECK(raw(w.done()) == Ref::corrupt);
  }
  auto match = [](unsigned length_sym, unsigned extra, unsigned dist_code) {
    BitWriter w = BitWriter().bits(1, 1).bits(1, 2);
    fixed(w, 'a');
    fixed(w, length_sym);
    w.bits(extra, length_sym == 284 ? 5 : 0).code(dist_code, 5);
    fixed(w, 256);
    return w.done();
  };
  CHECK(raw(match(257, 0, 30)) == Ref::corrupt);  // distance codes 30 and 31
  CHECK(raw(match(257, 0, 31)) == Ref::corrupt);
  CHECK(raw(match(257, 0, 1)) == Ref::corrupt);                     // distance 2, one byte written
  CHECK(raw(match(257, 0, 0), "aaaa") == Ref::ok);                  // distance 1
  CHECK(raw(match(284, 31, 0), std::string(259, 'a')) == Ref::ok);  // 284 + 31: 258, as zlib takes it
}

TEST_CASE("hand-made dynamic codes: over-subscribed, incomplete, single and empty codes as zlib has them",
          "[gz][inflate]") {
  auto body = [](Dynamic d, std::initializer_list<std::pair<unsigned, unsigned>> codes) {
    BitWriter w = d.write();
    for (auto [c, len] : codes) w.code(c, len);
    return w.done();
  };
  Dynamic over;  // 257 codes of 8 bits
  for (int i = 0; i < 257; ++i) over.lengths({8});
  over.lengths({1});
  CHECK(raw(body(over, {})) == Ref::corrupt);
  Dynamic incomplete = Dynamic().zeros(97).lengths({1}).zeros(158).lengths({2, 1});  // 'a' 1, end 2
  CHECK(raw(body(incomplete, {{0, 1}, {2, 2}}), "a") == Ref::corrupt);
  Dynamic single = Dynamic().zeros(256).lengths({1, 1});  // only the end, one bit; one distance
  CHECK(raw(body(single, {{0, 1}})) == Ref::ok);
  CHECK(raw(body(single, {{1, 1}})) == Ref::corrupt);
  Dynamic no_end = Dynamic().zeros(97).lengths({1, 1}).zeros(158).lengths({1});
  CHECK(raw(body(no_end, {{0, 1}})) == Ref::corrupt);
  Dynamic no_dist = Dynamic().zeros(97).lengths({1}).zeros(158).lengths({1, 0});  // 'a' 0, end 1
  CHECK(raw(body(no_dist, {{0, 1}, {0, 1}, {1, 1}}), "aa") == Ref::ok);
  Dynamic length = Dynamic().zeros(97).lengths({2}).zeros(158).lengths({2, 1, 0});  // 'a' 10, end 11, 257 0
  length.nlit = 258;
  CHECK(raw(body(length, {{2, 2}, {0, 1}, {3, 2}}), "aaaa") == Ref::corrupt);  // no distance code at all
  Dynamic one_dist = length;
  one_dist.lens.back() = {1, 0};
  CHECK(raw(body(one_dist, {{2, 2}, {0, 1}, {0, 1}, {3, 2}}), "aaaa") == Ref::ok);
  CHECK(raw(body(one_dist, {{2, 2}, {0, 1}, {1, 1}, {3, 2}})) == Ref::corrupt);
  Dynamic part_dist = one_dist;
  part_dist.ndist = 2;
  part_dist.lengths({2});  // 1 and 2 bits: incomplete
  CHECK(raw(body(part_dist, {{2, 2}, {0, 1}, {0, 1}, {3, 2}}), "aaaa") == Ref::corrupt);
}

TEST_CASE("hand-made code lengths: repeats and counts zlib refuses", "[gz][inflate]") {
  Dynamic first_repeat;
  first_repeat.lens.push_back({16, 0});
  CHECK(raw(first_repeat.write().done()) == Ref::corrupt);
  Dynamic past_end = Dynamic().zeros(250).lengths({1});
  past_end.lens.push_back({18, 10});  // 21 more zeros: 272 of 258
  CHECK(raw(past_end.write().done()) == Ref::corrupt);
  // a repeat that runs from the literal lengths into the distance ones is fine
  Dynamic across = Dynamic().zeros(256).lengths({1});
  across.nlit = 258;
  across.ndist = 2;
  across.lens.push_back({16, 0});  // 257 and both distances: 1 bit
  BitWriter w = across.write();
  w.code(0, 1);
  CHECK(raw(w.done()) == Ref::ok);
  for (auto [nlit, ndist] : {std::pair{287u, 1u}, {288u, 1u}, {257u, 31u}, {257u, 32u}}) {
    Dynamic too_many = Dynamic().zeros(256).lengths({1}).zeros(nlit - 257 + ndist - 1).lengths({1});
    too_many.nlit = nlit;
    too_many.ndist = ndist;
    CHECK(raw(too_many.write().done()) == Ref::corrupt);
  }
  // the code length code itself: over-subscribed, incomplete, empty
  for (unsigned each : {1u, 2u, 0u}) {
    BitWriter h = BitWriter().bits(1, 1).bits(2, 2).bits(0, 5).bits(0, 5).bits(15, 4);
    for (int i = 0; i < 19; ++i) h.bits(i == 3 || each == 1 ? each : 0, 3);  // each 1: all 19 take 1 bit
    h.bits(0, 20);
    CHECK(raw(h.done()) == Ref::corrupt);
  }
}
