// gzip in memory, for .gz state, save and log files.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace loopkit {

// The one rule for whether bytes are gzip: they start with gzip's magic
// number, or, when a name is given, it ends in ".gz" and they are not empty
// (then bytes that are not gzip are corrupt, exit 3 from gunzip). A writer
// passes no name: a file it created plain is read back plain.
bool is_gzip(std::string_view data, std::string_view name = {});

// How far gzip data of gz_size bytes may inflate: 100 times its size, and
// at least 256 MiB. Real JSON and logs inflate 5 to 50 times; a bomb (zlib
// reaches 1000 times) stops there instead of taking all memory.
std::size_t gunzip_limit(std::size_t gz_size);
// Every member of the stream, one after the other, as gzip -d reads a file
// that `gzip >>` appended to (trailing zero bytes, a tape's padding, are
// ignored). Corrupt or truncated data, or more than limit bytes inflated:
// exit 3 naming subject. Only gzip members (RFC 1952), as gzip -d: a zlib
// stream (RFC 1950), which zlib's inflate once took here too, is corrupt.
// Inflated by sys/gz/inflate, not zlib, so that the tools that only read .gz
// files carry none of zlib; each member's CRC-32 and size are checked.
std::string gunzip(std::string_view data, std::string_view subject);
std::string gunzip(std::string_view data, std::string_view subject, std::size_t limit);
// One gzip member of data, of any size, by sys/gz/deflate (no zlib): the header
// zlib's level 6 wrote (no name, time 0, Unix), so a file reads the same
// bytes as before; the trailer's size is data's modulo 2^32, as RFC 1952
// has it.
std::string gzip(std::string_view data);

}  // namespace loopkit
