// The steps of 16 bytes (8 for digits) that let core/scan/scan_lexer.hpp cross
// plain runs without looking at each byte: the length of the run of string
// bytes that need no check, of whitespace, of digits. Each reads exactly its
// block, so callers call it only where the whole block lies in the text
// (a mapped file ends where the file ends: a byte past it can fault).
// SSE2 on x86-64 (where it is the baseline); elsewhere the same answers from
// plain 64-bit words (SWAR), which the unit tests hold against the SSE2 ones.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace loopkit::scan::detail {

inline constexpr std::uint64_t ones = 0x0101010101010101ull;
inline constexpr std::uint64_t highs = 0x8080808080808080ull;

// 8 bytes as a number whose lowest byte is the first one
inline std::uint64_t load8(const unsigned char* s) {
  std::uint64_t x;
  std::memcpy(&x, s, 8);
  if constexpr (std::endian::native == std::endian::big) x = __builtin_bswap64(x);
  return x;
}

// The index of the lowest bit set in m, which is not 0 (one instruction
// where std::countr_zero would test for 0 first).
inline std::size_t first_bit(std::uint64_t m) { return static_cast<std::size_t>(__builtin_ctzll(m)); }

// 2 or 4 bytes as they lie in memory, to compare with word2 or word4 of
// the same letters (a literal, ": ")
inline std::uint16_t load2(const unsigned char* s) {
  std::uint16_t x;
  std::memcpy(&x, s, 2);
  return x;
}
inline std::uint32_t load4(const unsigned char* s) {
  std::uint32_t x;
  std::memcpy(&x, s, 4);
  return x;
}
template <std::size_t N>
inline constexpr auto word(const char (&w)[N]) {
  using T = std::conditional_t<N == 3, std::uint16_t, std::uint32_t>;
  T x = 0;
  for (std::size_t i = N - 1; i-- > 0;) x = static_cast<T>(x << 8 | static_cast<unsigned char>(w[i]));
  if constexpr (std::endian::native == std::endian::big) x = N == 3 ? __builtin_bswap16(x) : __builtin_bswap32(x);
  return x;
}
inline constexpr std::uint16_t word2(const char (&w)[3]) { return word(w); }
inline constexpr std::uint32_t word4(const char (&w)[5]) { return word(w); }

// The high bit set in each byte of x that is not zero, exactly: the sum
// stays inside each byte, so no carry marks a neighbour.
inline std::uint64_t nonzero_bytes(std::uint64_t x) { return (((x & ~highs) + ~highs) | x) & highs; }
inline std::uint64_t zero_bytes(std::uint64_t x) { return ~nonzero_bytes(x) & highs; }
// The high bits of the 8 bytes as 8 bits, the first byte's lowest: the
// multiply gathers bit 7 of byte i at bit 56 + i, with no two products
// overlapping.
inline unsigned bits8(std::uint64_t marks) {
  return static_cast<unsigned>(((marks >> 7) * 0x0102040810204080ull) >> 56);
}

// String bytes that stop a plain run: '"', '\\', a control character
// (below 0x20: its top three bits are clear) and a non-ASCII byte (UTF-8 is
// checked a sequence at a time).
inline unsigned string_stops8(std::uint64_t x) {
  return bits8(zero_bytes(x ^ (ones * '"')) | zero_bytes(x ^ (ones * '\\')) | zero_bytes(x & (ones * 0xe0)) |
               (x & highs));
}
inline unsigned string_stops16_swar(const unsigned char* s) {
  return string_stops8(load8(s)) | string_stops8(load8(s + 8)) << 8;
}

// Whitespace as pretty-printed text has it: ' ' and '\n' ('\t' and '\r',
// rare, are the caller's to step over).
inline unsigned blanks8(std::uint64_t x) { return bits8(zero_bytes(x ^ (ones * ' ')) | zero_bytes(x ^ (ones * '\n'))); }
inline unsigned blank16_swar(const unsigned char* s) {
  return first_bit(~(blanks8(load8(s)) | blanks8(load8(s + 8)) << 8));
}

// The digits at the start of 8 bytes. With the high bit of each byte set
// aside, adding 0x46 carries into it from 0x3a up and adding 0x50 from
// 0x30 up, neither past its byte: a digit is a byte that reaches 0x30 but
// not 0x3a and has no high bit of its own.
inline unsigned digits8(const unsigned char* s) {
  std::uint64_t x = load8(s), low = x & ~highs;
  std::uint64_t other = ((low + ones * 0x46) | ~(low + ones * 0x50) | x) & highs;
  return other ? static_cast<unsigned>(std::countr_zero(other)) / 8 : 8;
}

// A bit for each of the 16 bytes at s that stops a plain run of a string,
// the first byte's lowest.
#if defined(__SSE2__)
inline unsigned string_stops16(const unsigned char* s) {
  __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  // a signed compare below ' ' catches the control characters and every byte >= 0x80
  __m128i stop =
      _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8('"')), _mm_cmpeq_epi8(c, _mm_set1_epi8('\\'))),
                   _mm_cmplt_epi8(c, _mm_set1_epi8(' ')));
  return static_cast<unsigned>(_mm_movemask_epi8(stop));
}
// The number of blank bytes at s, 0 to 16.
inline unsigned blank16(const unsigned char* s) {
  __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  __m128i blank = _mm_or_si128(_mm_cmpeq_epi8(c, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(c, _mm_set1_epi8('\n')));
  return first_bit(~static_cast<unsigned>(_mm_movemask_epi8(blank)));
}
#else
inline unsigned string_stops16(const unsigned char* s) { return string_stops16_swar(s); }
inline unsigned blank16(const unsigned char* s) { return blank16_swar(s); }
#endif

}  // namespace loopkit::scan::detail
