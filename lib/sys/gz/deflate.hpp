// Raw deflate (RFC 1951) encoding, for gzip: writing .gz files needs none
// of zlib's deflate, the counterpart of sys/inflate.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace loopkit {

// Appends data as one raw deflate stream to out: LZ77 over a 32 KiB window
// with zlib's level 6 (hash chains of at most 128, lazy matching), each
// block written the cheapest of stored, fixed and dynamic codes, stored
// blocks merged so incompressible data grows 5 bytes per 65535. The output
// depends on data alone; data of any size (no 32-bit counts).
void deflate_raw(std::string_view data, std::string& out);

}  // namespace loopkit
