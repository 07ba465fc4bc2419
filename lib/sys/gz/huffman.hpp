// Prefix codes of limited length, for deflate's blocks (sys/gz/deflate).
#pragma once
#include <cstddef>
#include <cstdint>

namespace loopkit {

// The code lengths, of at most limit bits, that make the shortest prefix
// code for the n symbols with these frequencies: Huffman's code when it
// fits the limit, else package-merge's; length 0 for an unused symbol. The
// code is complete: with fewer than two symbols used, two get 1 bit
// (inflate refuses an incomplete code-length code). n at most 2^limit and
// 288; the same frequencies always give the same lengths.
void limited_code_lengths(const std::uint32_t* freq, std::size_t n, unsigned limit, std::uint8_t* lengths);

}  // namespace loopkit
