#include "sys/gz/deflate.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <vector>

#include "sys/gz/deflate_format.hpp"
#include "sys/gz/huffman.hpp"

namespace loopkit {

namespace {

using namespace deflate_format;

constexpr std::size_t kWindow = 32768;
constexpr unsigned kMinMatch = 3, kMaxMatch = 258;
constexpr std::size_t kNone = std::size_t(-1);
// zlib's level 6: a match this long is good enough to search less after
// it, one this long is not bettered lazily, one this long ends a search
constexpr unsigned kGood = 8, kLazy = 16, kNice = 128, kChain = 128;
// a 3-byte match this far back costs more bits than its three literals
constexpr std::size_t kTooFar = 4096;
// symbols a block gathers before it is written: zlib's at memLevel 8
constexpr std::size_t kBlockSymbols = 16383;
constexpr std::size_t kStoredMax = 65535;

constexpr unsigned kLitSyms = 286, kDistSyms = 30, kCodeSyms = 19, kEnd = 256;
constexpr unsigned kMaxBits = 15, kMaxCodeBits = 7;

constexpr std::uint8_t kCodeExtra[kCodeSyms] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7};

// length 3..258 to its length symbol less 257
constexpr auto kLengthSym = [] {
  std::array<std::uint8_t, kMaxMatch + 1> t{};
  for (unsigned s = 0; s < 28; ++s)
    for (unsigned l = kLengthBase[s]; l < kLengthBase[s] + (1u << kLengthExtra[s]) && l < kMaxMatch; ++l) t[l] = s;
  t[kMaxMatch] = 28;
  return t;
}();

unsigned dist_sym(std::size_t dist) {
  unsigned x = static_cast<unsigned>(dist - 1);
  if (x < 4) return x;
  unsigned top = std::bit_width(x) - 1;
  return 2 * top + ((x >> (top - 1)) & 1);
}

// Bits go out least significant first, as RFC 1951 packs them.
class BitWriter {
public:
  explicit BitWriter(std::string& out) : out_(out) {}
  void put(std::uint32_t bits, unsigned n) {
    acc_ |= std::uint64_t(bits) << count_;
    count_ += n;
    if (count_ >= 32) {
      char b[4] = {char(acc_), char(acc_ >> 8), char(acc_ >> 16), char(acc_ >> 24)};
      out_.append(b, 4);
      acc_ >>= 32;
      count_ -= 32;
    }
  }
  // to the next byte boundary, the bits still held written out
  void align() {
    for (; count_ > 0; count_ = count_ > 8 ? count_ - 8 : 0, acc_ >>= 8) out_.push_back(char(acc_));
    acc_ = 0;
  }
  void bytes(std::string_view d) { out_.append(d); }

private:
  std::string& out_;
  std::uint64_t acc_ = 0;
  unsigned count_ = 0;
};

// A prefix code of n symbols: each one's length and its code, bit-reversed
// for the writer
template <std::size_t n>
struct Code {
  std::array<std::uint8_t, n> len{};
  std::array<std::uint16_t, n> bits{};
};
using LitCode = Code<288>;  // 286 and 287 only in the fixed code's lengths
using DistCode = Code<32>;  // 30 and 31 likewise

// the n low bits of code in reverse order
constexpr unsigned reversed(unsigned code, unsigned n) {
  code = (code & 0x5555) << 1 | (code >> 1 & 0x5555);
  code = (code & 0x3333) << 2 | (code >> 2 & 0x3333);
  code = (code & 0x0f0f) << 4 | (code >> 4 & 0x0f0f);
  code = (code & 0x00ff) << 8 | (code >> 8 & 0x00ff);
  return code >> (16 - n);
}

// RFC 1951 3.2.2: the canonical codes of the lengths
template <std::size_t n>
constexpr void assign_codes(Code<n>& c) {
  unsigned count[kMaxBits + 1] = {}, next[kMaxBits + 1] = {};
  for (unsigned l : c.len) ++count[l];
  count[0] = 0;
  for (unsigned b = 1, code = 0; b <= kMaxBits; ++b) next[b] = code = (code + count[b - 1]) << 1;
  for (std::size_t i = 0; i < c.len.size(); ++i)
    if (c.len[i]) c.bits[i] = static_cast<std::uint16_t>(reversed(next[c.len[i]]++, c.len[i]));
}

// RFC 1951 3.2.6, computed by the compiler: read-only data
constexpr LitCode kFixedLit = [] {
  LitCode f;
  for (unsigned i = 0; i < 288; ++i) f.len[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
  assign_codes(f);
  return f;
}();
constexpr DistCode kFixedDist = [] {
  DistCode f;
  for (unsigned i = 0; i < 32; ++i) f.len[i] = 5;
  assign_codes(f);
  return f;
}();

struct Match {
  unsigned len;
  std::size_t dist;
};

unsigned common_length(const char* a, const char* b, std::size_t max) {
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= max; i += 8) {
      std::uint64_t x, y;
      std::memcpy(&x, a + i, 8);
      std::memcpy(&y, b + i, 8);
      if (x != y) return static_cast<unsigned>(i + std::countr_zero(x ^ y) / 8);
    }
  }
  while (i < max && a[i] == b[i]) ++i;
  return static_cast<unsigned>(i);
}

// Hash chains: for each hash of three bytes the last position that had it,
// and for each position the one before it with the same hash, over the
// window. Small inputs get small tables (the output is the same).
class Matcher {
public:
  explicit Matcher(std::string_view d)
      : d_(d),
        bits_(std::clamp<unsigned>(std::bit_width(d.size()), 8, 15)),
        mask_(std::min(kWindow, std::bit_ceil(std::max<std::size_t>(d.size(), 1))) - 1),
        head_(std::size_t(1) << bits_, kNone),
        prev_(new std::size_t[mask_ + 1]) {}

  // Records position s (three bytes from s in data); the last position
  // before it with the same hash, or kNone.
  std::size_t insert(std::size_t s) {
    auto p = reinterpret_cast<const unsigned char*>(d_.data() + s);
    std::uint32_t h = (std::uint32_t(p[0]) | std::uint32_t(p[1]) << 8 | std::uint32_t(p[2]) << 16) * 0x9e3779b1u;
    h >>= 32 - bits_;
    std::size_t before = head_[h];
    prev_[s & mask_] = before;
    head_[h] = s;
    return before;
  }

  // The longest match for s longer than best, from cand back along its
  // chain; len 0 when none is longer
  Match longest(std::size_t s, std::size_t cand, unsigned best) const {
    std::size_t max_len = std::min<std::size_t>(kMaxMatch, d_.size() - s);
    if (best >= max_len) return {0, 0};
    unsigned nice = static_cast<unsigned>(std::min<std::size_t>(kNice, max_len));
    unsigned chain = best >= kGood ? kChain / 4 : kChain;
    std::size_t limit = s > kWindow ? s - kWindow : 0;
    const char* p = d_.data();
    Match m{0, 0};
    for (;;) {
      const char* c = p + cand;
      if (c[best] == p[s + best] && c[0] == p[s] && c[1] == p[s + 1]) {
        unsigned len = common_length(c, p + s, max_len);
        if (len > best) {
          best = len;
          m = {len, s - cand};
          if (len >= nice) break;
        }
      }
      // the slot of a position a window back now holds s's link
      if (--chain == 0 || cand == limit) break;
      std::size_t next = prev_[cand & mask_];
      if (next == kNone || next < limit) break;
      cand = next;
    }
    return m;
  }

private:
  std::string_view d_;
  unsigned bits_;
  std::size_t mask_;
  std::vector<std::size_t> head_;
  // not cleared: a position's slot is written when it is inserted, before
  // any chain reaches it
  std::unique_ptr<std::size_t[]> prev_;
};

// What a dynamic block's header holds: its codes, the code lengths run-length
// coded (symbol | extra bits' value << 5), its size in bits with the data.
struct Dynamic {
  LitCode lit;
  DistCode dist;
  Code<kCodeSyms> lengths;
  std::array<std::uint16_t, kLitSyms + kDistSyms> ops;  // one a length at most
  std::size_t nops = 0;
  unsigned nlit = 0, ndist = 0, nlengths = 0;
  std::uint64_t bits = 0;
};

// RFC 1951 3.2.7: runs of zeros as 17 and 18, repeats of a length as 16
// (fixed arrays, not vectors: their growth was 1 KB more in each tool)
std::size_t run_lengths(const std::uint8_t* lens, std::size_t n, std::uint16_t* ops) {
  std::size_t nops = 0;
  for (std::size_t i = 0; i < n;) {
    unsigned v = lens[i];
    std::size_t run = 1;
    while (i + run < n && lens[i + run] == v) ++run;
    i += run;
    if (v == 0) {
      for (; run >= 11; run -= std::min<std::size_t>(run, 138))
        ops[nops++] = static_cast<std::uint16_t>(18 | (std::min<std::size_t>(run, 138) - 11) << 5);
      if (run >= 3) {
        ops[nops++] = static_cast<std::uint16_t>(17 | (run - 3) << 5);
        run = 0;
      }
    } else {
      ops[nops++] = static_cast<std::uint16_t>(v);
      --run;
      for (; run >= 3; run -= std::min<std::size_t>(run, 6))
        ops[nops++] = static_cast<std::uint16_t>(16 | (std::min<std::size_t>(run, 6) - 3) << 5);
    }
    for (; run > 0; --run) ops[nops++] = static_cast<std::uint16_t>(v);
  }
  return nops;
}

// One block's symbols and frequencies, then written as a block.
class Blocks {
public:
  // every symbol takes a byte at least: a small input, a small buffer
  Blocks(std::string_view data, std::string& out)
      : data_(data), w_(out), syms_(new std::uint32_t[std::min(kBlockSymbols, data.size() + 1)]) {}

  void literal(unsigned char b) {
    syms_[nsyms_++] = b;
    ++lit_[b];
    ++bytes_;
    if (nsyms_ == kBlockSymbols) flush(false);
  }
  void match(unsigned len, std::size_t dist) {
    syms_[nsyms_++] = static_cast<std::uint32_t>(dist << 9 | len);
    ++lit_[257 + kLengthSym[len]];
    ++dist_[dist_sym(dist)];
    bytes_ += len;
    if (nsyms_ == kBlockSymbols) flush(false);
  }
  void finish() { flush(true); }

private:
  void flush(bool last);
  void plan(Dynamic& d) const;
  std::uint64_t data_bits(const LitCode& lit, const DistCode& dist) const;
  void write_header(const Dynamic& d);
  void write_symbols(const LitCode& lit, const DistCode& dist);
  void write_stored(bool last);

  std::string_view data_;
  BitWriter w_;
  std::size_t start_ = 0;                  // the first byte of the block gathered
  std::size_t bytes_ = 0;                  // the bytes its symbols stand for
  std::size_t stored_ = 0;                 // bytes before start_ still to be written stored
  std::unique_ptr<std::uint32_t[]> syms_;  // a literal, or dist << 9 | length
  std::size_t nsyms_ = 0;
  std::array<std::uint32_t, kLitSyms> lit_{};
  std::array<std::uint32_t, kDistSyms> dist_{};
};

std::uint64_t Blocks::data_bits(const LitCode& lit, const DistCode& dist) const {
  std::uint64_t bits = 0;
  for (unsigned i = 0; i < kLitSyms; ++i) bits += std::uint64_t(lit_[i]) * lit.len[i];
  for (unsigned i = 0; i < 29; ++i) bits += std::uint64_t(lit_[257 + i]) * kLengthExtra[i];
  for (unsigned i = 0; i < kDistSyms; ++i) bits += std::uint64_t(dist_[i]) * (dist.len[i] + kDistExtra[i]);
  return bits;
}

void Blocks::plan(Dynamic& d) const {
  limited_code_lengths(lit_.data(), kLitSyms, kMaxBits, d.lit.len.data());
  limited_code_lengths(dist_.data(), kDistSyms, kMaxBits, d.dist.len.data());
  assign_codes(d.lit);
  assign_codes(d.dist);
  for (d.nlit = kLitSyms; d.lit.len[d.nlit - 1] == 0;) --d.nlit;
  for (d.ndist = kDistSyms; d.dist.len[d.ndist - 1] == 0;) --d.ndist;
  // the two lists of lengths run-length coded as one (runs may cross)
  std::uint8_t lens[kLitSyms + kDistSyms];
  std::copy_n(d.dist.len.begin(), d.ndist, std::copy_n(d.lit.len.begin(), d.nlit, lens));
  d.nops = run_lengths(lens, d.nlit + d.ndist, d.ops.data());
  std::uint32_t freq[kCodeSyms] = {};
  for (std::size_t i = 0; i < d.nops; ++i) ++freq[d.ops[i] & 31];
  limited_code_lengths(freq, kCodeSyms, kMaxCodeBits, d.lengths.len.data());
  assign_codes(d.lengths);
  for (d.nlengths = kCodeSyms; d.nlengths > 4 && d.lengths.len[kCodeOrder[d.nlengths - 1]] == 0;) --d.nlengths;
  d.bits = 3 + 5 + 5 + 4 + 3 * d.nlengths + data_bits(d.lit, d.dist);
  for (std::size_t i = 0; i < d.nops; ++i) d.bits += d.lengths.len[d.ops[i] & 31] + kCodeExtra[d.ops[i] & 31];
}

void Blocks::write_header(const Dynamic& d) {
  w_.put(d.nlit - 257, 5);
  w_.put(d.ndist - 1, 5);
  w_.put(d.nlengths - 4, 4);
  for (unsigned i = 0; i < d.nlengths; ++i) w_.put(d.lengths.len[kCodeOrder[i]], 3);
  for (std::size_t i = 0; i < d.nops; ++i) {
    std::uint16_t op = d.ops[i];
    unsigned sym = op & 31;
    w_.put(d.lengths.bits[sym], d.lengths.len[sym]);
    if (kCodeExtra[sym]) w_.put(op >> 5, kCodeExtra[sym]);
  }
}

void Blocks::write_symbols(const LitCode& lit, const DistCode& dist) {
  for (std::size_t i = 0; i < nsyms_; ++i) {
    std::uint32_t s = syms_[i];
    if (s < 256) {
      w_.put(lit.bits[s], lit.len[s]);
      continue;
    }
    unsigned len = s & 511, ls = kLengthSym[len];
    std::size_t d = s >> 9;
    unsigned ds = dist_sym(d);
    w_.put(lit.bits[257 + ls], lit.len[257 + ls]);
    w_.put(len - kLengthBase[ls], kLengthExtra[ls]);
    w_.put(dist.bits[ds], dist.len[ds]);
    w_.put(static_cast<std::uint32_t>(d - kDistBase[ds]), kDistExtra[ds]);
  }
  w_.put(lit.bits[kEnd], lit.len[kEnd]);
}

// The bytes waiting to be stored, 65535 at most a block; the last block
// ends the stream when last.
void Blocks::write_stored(bool last) {
  std::size_t at = start_ - stored_;
  do {
    std::size_t n = std::min(stored_, kStoredMax);
    w_.put(last && n == stored_ ? 1 : 0, 3);
    w_.align();
    w_.put(static_cast<std::uint32_t>(n | (~n & 0xffff) << 16), 32);
    w_.align();
    w_.bytes(data_.substr(at, n));
    at += n;
    stored_ -= n;
  } while (stored_ > 0);
}

// The block written the cheapest way. A stored block waits, to join the
// next if it is stored too: random data costs 5 bytes per 65535, not per
// block.
void Blocks::flush(bool last) {
  lit_[kEnd] = 1;
  Dynamic d;
  plan(d);
  std::uint64_t fixed = 3 + data_bits(kFixedLit, kFixedDist);
  std::uint64_t stored = 8 * (bytes_ + 5 * ((bytes_ + kStoredMax - 1) / kStoredMax));
  if ((bytes_ > 0 && stored <= std::min(fixed, d.bits)) || (bytes_ == 0 && stored_ > 0)) {
    stored_ += bytes_;
    start_ += bytes_;
    if (last) write_stored(true);
  } else {
    if (stored_ > 0) write_stored(false);
    start_ += bytes_;
    w_.put(last ? 1 : 0, 1);
    if (fixed <= d.bits) {
      w_.put(1, 2);
      write_symbols(kFixedLit, kFixedDist);
    } else {
      w_.put(2, 2);
      write_header(d);
      write_symbols(d.lit, d.dist);
    }
  }
  if (last) w_.align();
  bytes_ = 0;
  nsyms_ = 0;
  lit_.fill(0);
  dist_.fill(0);
}

}  // namespace

void deflate_raw(std::string_view data, std::string& out) {
  Blocks blocks(data, out);
  Matcher m(data);
  std::size_t n = data.size(), s = 0;
  Match prev{0, 0};            // found at s - 1, written unless s has a longer one
  bool literal_waits = false;  // data[s - 1], not yet written
  while (s < n) {
    Match cur{0, 0};
    if (n - s >= kMinMatch) {
      std::size_t cand = m.insert(s);
      if (cand != kNone && prev.len < kLazy && s - cand <= kWindow)
        cur = m.longest(s, cand, std::max(prev.len, kMinMatch - 1));
      if (cur.len == kMinMatch && cur.dist > kTooFar) cur.len = 0;
    }
    if (prev.len >= kMinMatch && cur.len <= prev.len) {
      blocks.match(prev.len, prev.dist);
      std::size_t end = s - 1 + prev.len;
      for (std::size_t t = s + 1; t < end; ++t)
        if (n - t >= kMinMatch) m.insert(t);
      s = end;
      prev = {0, 0};
      literal_waits = false;
    } else {
      if (literal_waits) blocks.literal(static_cast<unsigned char>(data[s - 1]));
      literal_waits = true;
      prev = cur;
      ++s;
    }
  }
  if (literal_waits) blocks.literal(static_cast<unsigned char>(data[n - 1]));
  blocks.finish();
}

}  // namespace loopkit
