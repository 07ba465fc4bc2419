// CRC-32 as gzip's trailer holds it (RFC 1952), so that reading .gz files
// needs nothing of zlib.
#pragma once
#include <cstdint>
#include <string_view>

namespace loopkit {

// crc continues a CRC of the bytes before data (0 to start one).
std::uint32_t gzip_crc32(std::string_view data, std::uint32_t crc = 0);

}  // namespace loopkit
