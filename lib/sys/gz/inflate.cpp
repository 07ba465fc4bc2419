#include "sys/gz/inflate.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "sys/gz/deflate_format.hpp"

namespace loopkit {

namespace {

// A table entry: flags on top, then a value (a literal, a length or
// distance base, a subtable's offset), the extra bits that follow the code
// (for a subtable pointer: its index bits) and the bits the code takes.
constexpr std::uint32_t kLiteral = 1u << 31, kEnd = 1u << 30, kSub = 1u << 29, kBad = 1u << 28;

constexpr std::uint32_t entry(std::uint32_t flags, unsigned value, unsigned extra, unsigned bits) {
  return flags | value << 8 | extra << 4 | bits;
}
unsigned bits_of(std::uint32_t e) { return e & 15; }
unsigned extra_of(std::uint32_t e) { return (e >> 4) & 15; }
unsigned value_of(std::uint32_t e) { return (e >> 8) & 0xffff; }

// Root index bits: most codes resolve in one lookup; longer ones take a
// second (zlib's 9 and 6; libdeflate's 11 and 8). Sizes: the bound zlib's
// enough.c gives for those root bits (1334, 402), rounded up; builds check it.
constexpr unsigned kLitRoot = 10, kDistRoot = 8, kCodeRoot = 7;
constexpr std::size_t kLitSize = 1536, kDistSize = 512, kCodeSize = 128;

using deflate_format::kDistBase, deflate_format::kDistExtra, deflate_format::kLengthBase, deflate_format::kLengthExtra;

enum class Kind { lengths, literals, distances };

// What a symbol means, without its code's bits. Literal/length 286 and 287
// and distances 30 and 31 exist only in the fixed codes, and are invalid.
std::uint32_t symbol_entry(Kind kind, unsigned sym) {
  if (kind == Kind::lengths) return entry(0, sym, 0, 0);
  if (kind == Kind::distances) return sym < 30 ? entry(0, kDistBase[sym], kDistExtra[sym], 0) : kBad;
  if (sym < 256) return entry(kLiteral, sym, 0, 0);
  if (sym == 256) return kEnd;
  sym -= 257;
  return sym < 29 ? entry(0, kLengthBase[sym], kLengthExtra[sym], 0) : kBad;
}

unsigned reversed(unsigned code, unsigned bits) {
  unsigned r = 0;
  for (unsigned i = 0; i < bits; ++i, code >>= 1) r = r << 1 | (code & 1);
  return r;
}

// The index bits of the subtable that starts with a code of len bits: as
// many as the codes sharing its root prefix need (zlib's inflate_table).
unsigned subtable_bits(const unsigned* remaining, unsigned len, unsigned root, unsigned max) {
  unsigned curr = len - root;
  int left = 1 << curr;
  while (curr + root < max) {
    left -= static_cast<int>(remaining[curr + root]);
    if (left <= 0) break;
    ++curr;
    left <<= 1;
  }
  return curr;
}

struct Code {
  unsigned count[16] = {};
  unsigned max = 0;
  std::uint16_t sorted[288] = {};  // symbols in canonical order
};

// zlib's rules for a code: never over-subscribed; incomplete only as one
// code of one bit for literals/lengths or distances. No code at all is let
// through for those two (the caller refuses a missing end of block; a
// distance then is invalid), never for code lengths.
bool check_code(const std::uint8_t* lens, unsigned n, Kind kind, Code& c) {
  for (unsigned s = 0; s < n; ++s) ++c.count[lens[s]];
  c.count[0] = 0;
  for (c.max = 15; c.max > 0 && c.count[c.max] == 0;) --c.max;
  if (c.max == 0) return kind != Kind::lengths;
  int left = 1;
  for (unsigned len = 1; len <= 15; ++len) {
    left = (left << 1) - static_cast<int>(c.count[len]);
    if (left < 0) return false;
  }
  if (left > 0 && (kind == Kind::lengths || c.max != 1)) return false;
  unsigned offset[16] = {};
  for (unsigned len = 1; len < 15; ++len) offset[len + 1] = offset[len] + c.count[len];
  for (unsigned s = 0; s < n; ++s)
    if (lens[s]) c.sorted[offset[lens[s]]++] = static_cast<std::uint16_t>(s);
  return true;
}

// The lookup table of the code with these lengths: root bits of input index
// it; a code longer than that points to a subtable for the rest. Entries no
// code reaches are kBad.
bool build_table(const std::uint8_t* lens, unsigned n, Kind kind, std::uint32_t* table, unsigned root,
                 std::size_t size) {
  Code c;
  if (!check_code(lens, n, kind, c)) return false;
  std::fill(table, table + (std::size_t(1) << root), entry(kBad, 0, 0, 1));
  unsigned remaining[16];
  std::copy(std::begin(c.count), std::end(c.count), remaining);
  unsigned code = 0, i = 0, prefix = ~0u, sub = 0, sub_bits = 0;
  std::size_t next = std::size_t(1) << root;
  for (unsigned len = 1; len <= c.max; ++len, code <<= 1) {
    for (unsigned k = 0; k < c.count[len]; ++k, ++code, --remaining[len]) {
      unsigned rev = reversed(code, len);
      std::uint32_t e = symbol_entry(kind, c.sorted[i++]);
      if (len <= root) {
        for (unsigned j = rev; j < (1u << root); j += 1u << len) table[j] = e | len;
        continue;
      }
      if ((rev & ((1u << root) - 1)) != prefix) {
        prefix = rev & ((1u << root) - 1);
        sub_bits = subtable_bits(remaining, len, root, c.max);
        sub = static_cast<unsigned>(next);
        next += std::size_t(1) << sub_bits;
        if (next > size) return false;
        table[prefix] = entry(kSub, sub, sub_bits, root);
      }
      for (unsigned j = rev >> root; j < (1u << sub_bits); j += 1u << (len - root)) table[sub + j] = e | (len - root);
    }
  }
  return true;
}

// The input as bits, least significant first. Past its end it reads zero
// bytes (counted in overrun) so that decoding needs no test per bit; what
// is decoded from them is refused before it is written (real()).
struct Bits {
  const unsigned char* begin;
  const unsigned char* p;
  const unsigned char* end;
  std::uint64_t buf = 0;
  unsigned left = 0, overrun = 0;

  // at least 56 bits: a literal/length code, its extra bits, a distance
  // code and its extra bits take at most 48
  void refill() {
    if (end - p >= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      if constexpr (std::endian::native == std::endian::big) word = __builtin_bswap64(word);
      buf |= word << left;  // bits above left already held are the same bytes again
      p += (63 - left) >> 3;
      left |= 56;
      return;
    }
    for (; left < 56; left += 8) {
      if (p < end) buf |= std::uint64_t(*p++) << left;
      else ++overrun;
    }
  }
  unsigned take(unsigned n) {
    unsigned v = static_cast<unsigned>(buf & ((std::uint64_t(1) << n) - 1));
    buf >>= n;
    left -= n;
    return v;
  }
  // every bit taken so far was in the input
  bool real() const { return left >= overrun * 8; }
  // the offset of the next whole byte (past the end when cut short)
  std::size_t byte_offset() const { return std::size_t(p - begin) + overrun - left / 8; }
  void seek(std::size_t offset) {
    p = begin + offset;
    buf = 0;
    left = overrun = 0;
  }
};

// inlined: a call per symbol costs a tenth of the time
[[gnu::always_inline]] inline std::uint32_t decode(const std::uint32_t* table, unsigned root, Bits& b) {
  std::uint32_t e = table[b.buf & ((1u << root) - 1)];
  if (e & kSub) {
    b.take(root);
    e = table[value_of(e) + (b.buf & ((1u << extra_of(e)) - 1))];
  }
  b.take(bits_of(e));
  return e;
}

// The output: out's bytes, grown as needed, never past limit bytes (plus
// the slack that copies in words write beyond a match).
struct Out {
  static constexpr std::size_t kSlack = 16;
  std::string& s;
  std::size_t start, pos, cap, limit;
  char* base;

  Out(std::string& out, std::size_t lim)
      : s(out), start(out.size()), pos(out.size()), cap(out.size()), limit(lim), base(out.data()) {}
  ~Out() { s.resize(pos); }
  // room for n more bytes; false: they would pass the limit
  bool room(std::size_t n) { return pos + n + kSlack <= cap || grow(n); }
  bool grow(std::size_t n) {
    if (n > limit || pos > limit - n) return false;
    std::size_t most = limit > SIZE_MAX - kSlack ? SIZE_MAX : limit + kSlack;
    cap = std::min(most, std::max({cap * 2, pos + n + kSlack, s.capacity(), std::size_t(4096)}));
    s.resize(cap);
    base = s.data();
    return true;
  }
  std::size_t written() const { return pos - start; }
  // a match: with distance 8 and more, eight bytes a step (each step reads
  // only bytes already written); runs of one byte and short periods as they come
  void copy_match(std::size_t distance, std::size_t length) {
    char* dst = base + pos;
    const char* src = dst - distance;
    pos += length;
    if (distance >= 8) {
      for (char* stop = dst + length; dst < stop; dst += 8, src += 8) std::memcpy(dst, src, 8);
    } else if (distance == 1) {
      std::memset(dst, *src, length);
    } else {
      for (std::size_t i = 0; i < length; ++i) dst[i] = src[i];
    }
  }
};

// A block of Huffman codes, up to its end of block code.
Inflated inflate_codes(Bits& b, Out& out, const std::uint32_t* lit, const std::uint32_t* dist) {
  for (;;) {
    b.refill();
    std::uint32_t e = decode(lit, kLitRoot, b);
    if (e & kLiteral) {
      if (!b.real()) return Inflated::corrupt;
      if (!out.room(1)) return Inflated::past_limit;
      out.base[out.pos++] = static_cast<char>(value_of(e));
      continue;
    }
    if (e & kEnd) return Inflated::ok;
    if (e & kBad) return Inflated::corrupt;
    std::size_t length = value_of(e) + b.take(extra_of(e));
    std::uint32_t d = decode(dist, kDistRoot, b);
    if (d & kBad) return Inflated::corrupt;
    std::size_t distance = value_of(d) + b.take(extra_of(d));
    if (!b.real() || distance > out.written()) return Inflated::corrupt;
    if (!out.room(length)) return Inflated::past_limit;
    out.copy_match(distance, length);
  }
}

// A stored block: LEN and NLEN, then LEN bytes as they are. What of them
// the input holds is written before a cut is refused, as zlib does.
Inflated inflate_stored(Bits& b, std::string_view in, Out& out) {
  std::size_t at = b.byte_offset();
  if (at > in.size() || in.size() - at < 4) return Inflated::corrupt;
  auto byte = [&](std::size_t i) { return unsigned(static_cast<unsigned char>(in[at + i])); };
  unsigned len = byte(0) | byte(1) << 8, nlen = byte(2) | byte(3) << 8;
  if (len != (~nlen & 0xffff)) return Inflated::corrupt;
  at += 4;
  std::size_t have = std::min<std::size_t>(len, in.size() - at);
  if (!out.room(have)) return Inflated::past_limit;
  std::memcpy(out.base + out.pos, in.data() + at, have);
  out.pos += have;
  if (have < len) return Inflated::corrupt;
  b.seek(at + len);
  return Inflated::ok;
}

struct Tables {
  std::uint32_t lit[kLitSize];
  std::uint32_t dist[kDistSize];
};

// The code lengths of a dynamic block's two codes, themselves coded
// (RFC 1951 3.2.7). zlib's limits: 286 and 30 codes, repeats within them.
bool read_code_lengths(Bits& b, std::uint8_t* lens, unsigned n) {
  unsigned count = b.take(4) + 4;
  std::uint8_t code_lens[19] = {};
  for (unsigned i = 0; i < count; ++i) {
    b.refill();
    code_lens[deflate_format::kCodeOrder[i]] = static_cast<std::uint8_t>(b.take(3));
  }
  std::uint32_t table[kCodeSize];
  if (!build_table(code_lens, 19, Kind::lengths, table, kCodeRoot, kCodeSize)) return false;
  for (unsigned i = 0; i < n;) {
    b.refill();
    unsigned sym = value_of(decode(table, kCodeRoot, b));
    if (sym < 16) {
      lens[i++] = static_cast<std::uint8_t>(sym);
      continue;
    }
    if (sym == 16 && i == 0) return false;
    std::uint8_t repeated = sym == 16 ? lens[i - 1] : 0;
    unsigned times = sym == 16 ? 3 + b.take(2) : sym == 17 ? 3 + b.take(3) : 11 + b.take(7);
    if (times > n - i) return false;
    std::fill(lens + i, lens + i + times, repeated);
    i += times;
  }
  return true;
}

bool read_dynamic(Bits& b, Tables& t) {
  b.refill();
  unsigned nlit = b.take(5) + 257, ndist = b.take(5) + 1;
  if (nlit > 286 || ndist > 30) return false;
  std::uint8_t lens[286 + 30];
  if (!read_code_lengths(b, lens, nlit + ndist) || lens[256] == 0) return false;
  return build_table(lens, nlit, Kind::literals, t.lit, kLitRoot, kLitSize) &&
         build_table(lens + nlit, ndist, Kind::distances, t.dist, kDistRoot, kDistSize);
}

// The fixed codes (RFC 1951 3.2.6), built once.
const Tables& fixed_tables() {
  static const Tables fixed = [] {
    Tables t;
    std::uint8_t lens[288];
    std::fill(lens, lens + 144, 8);
    std::fill(lens + 144, lens + 256, 9);
    std::fill(lens + 256, lens + 280, 7);
    std::fill(lens + 280, lens + 288, 8);
    build_table(lens, 288, Kind::literals, t.lit, kLitRoot, kLitSize);
    std::fill(lens, lens + 32, 5);
    build_table(lens, 32, Kind::distances, t.dist, kDistRoot, kDistSize);
    return t;
  }();
  return fixed;
}

Inflated inflate_block(Bits& b, std::string_view in, Out& out, unsigned type, Tables& dynamic) {
  if (type == 0) return inflate_stored(b, in, out);
  if (type == 1) return inflate_codes(b, out, fixed_tables().lit, fixed_tables().dist);
  if (type == 2 && read_dynamic(b, dynamic)) return inflate_codes(b, out, dynamic.lit, dynamic.dist);
  return Inflated::corrupt;
}

}  // namespace

Inflated inflate_raw(std::string_view in, std::size_t& at, std::string& out, std::size_t limit) {
  auto begin = reinterpret_cast<const unsigned char*>(in.data());
  Bits b{begin, begin + at, begin + in.size()};
  Out o(out, limit);
  Tables dynamic;
  for (bool last = false; !last;) {
    b.refill();
    last = b.take(1);
    unsigned type = b.take(2);
    if (!b.real()) return Inflated::corrupt;
    if (Inflated r = inflate_block(b, in, o, type, dynamic); r != Inflated::ok) return r;
  }
  std::size_t end = b.byte_offset();
  if (end > in.size()) return Inflated::corrupt;
  at = end;
  return Inflated::ok;
}

}  // namespace loopkit
