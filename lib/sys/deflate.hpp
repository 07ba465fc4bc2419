// Raw deflate (RFC 1951) encoding, for gzip: writing .gz files needs none
// of zlib's deflate, the counterpart of sys/inflate.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loopkit {

// Appends data as one raw deflate stream to out: LZ77 over a 32 KiB window
// with zlib's level 6 (hash chains of at most 128, lazy matching), each
// block written the cheapest of stored, fixed and dynamic codes, stored
// blocks merged so incompressible data grows 5 bytes per 65535. The output
// depends on data alone; data of any size (no 32-bit counts).
void deflate_raw(std::string_view data, std::string& out);

// The code lengths, of at most limit bits, that make the shortest prefix
// code for the n symbols with these frequencies (package-merge): length 0
// for an unused symbol. The code is complete: with fewer than two symbols
// used, two get 1 bit (inflate refuses an incomplete code-length code).
// n at most 2^limit. Public for the tests.
void limited_code_lengths(const std::uint32_t* freq, std::size_t n, unsigned limit, std::uint8_t* lengths);

}  // namespace loopkit
