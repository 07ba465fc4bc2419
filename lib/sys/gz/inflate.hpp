// Raw deflate (RFC 1951) decoding, for gunzip: reading .gz files needs none
// of zlib's inflate. It accepts exactly what zlib's inflate accepts.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace loopkit {

enum class Inflated { ok, corrupt, past_limit };

// Inflates the deflate stream that starts at in[at] onto the end of out;
// on ok, at is the first byte after it. Distances reach back only into what
// this stream wrote (a gzip member starts afresh). past_limit: out would
// grow past limit bytes (as zlib fills a buffer of limit + 1, it is told
// before the stream turns out corrupt further on). corrupt: invalid or cut
// short. On a failure out holds what was decoded before it.
Inflated inflate_raw(std::string_view in, std::size_t& at, std::string& out, std::size_t limit);

}  // namespace loopkit
