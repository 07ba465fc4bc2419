// What gunzip must do, by zlib's inflate: the reference of the differential
// tests (tests/unit/inflate_test.cpp, tests/fuzz/fuzz_gzip.cpp). Member by
// member, each a fresh gzip-only stream (as gzip -d: no zlib streams),
// inflated 4 KiB of output at a time; trailing zero bytes end it.
#pragma once
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

enum class Ref { ok, corrupt, too_big };

// data deflated by zlib at a level and strategy (windowBits 15 + 16: a gzip
// member; -15: raw deflate, 15: a zlib stream); "" where zlib fails, which
// no input does
inline std::string zlib_deflate(std::string_view data, int level, int strategy, int window_bits = 15 + 16) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, strategy) != Z_OK) return "";
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(rc == Z_STREAM_END ? z.total_out : 0);
  deflateEnd(&z);
  return out;
}

// z's stream inflated 4 KiB of output at a time onto out: zlib's last
// answer, Z_MEM_ERROR once out is past limit
inline int inflate_in_steps(z_stream& z, std::string& out, std::size_t limit) {
  int rc = Z_OK;
  while (rc == Z_OK) {
    Bytef buf[4096];
    z.next_out = buf;
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(reinterpret_cast<char*>(buf), sizeof buf - z.avail_out);
    if (out.size() > limit) rc = Z_MEM_ERROR;
    else if (rc == Z_BUF_ERROR && z.avail_out == 0) rc = Z_OK;
  }
  return rc;
}

inline Ref zlib_gunzip(std::string_view in, std::string& out, std::size_t limit) {
  const Bytef* p = reinterpret_cast<const Bytef*>(in.data());
  std::size_t left = in.size();
  do {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK) return Ref::corrupt;
    z.next_in = const_cast<Bytef*>(p);
    z.avail_in = static_cast<uInt>(left);
    int rc = inflate_in_steps(z, out, limit);
    p += left - z.avail_in;
    left = z.avail_in;
    inflateEnd(&z);
    if (rc == Z_MEM_ERROR) return Ref::too_big;
    if (rc != Z_STREAM_END) return Ref::corrupt;
  } while (left > 0 && !std::all_of(p, p + left, [](Bytef b) { return b == 0; }));
  return Ref::ok;
}

// One raw deflate stream (RFC 1951) by zlib's inflate, 4 KiB at a time:
// with no CRC after it to catch wrong bytes, the output itself is compared,
// even what was written before the data turned out corrupt. used: the
// bytes of in the stream took.
inline Ref zlib_inflate_raw(std::string_view in, std::string& out, std::size_t limit, std::size_t& used) {
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return Ref::corrupt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  int rc = inflate_in_steps(z, out, limit);
  used = in.size() - z.avail_in;
  inflateEnd(&z);
  if (rc == Z_MEM_ERROR) return Ref::too_big;
  return rc == Z_STREAM_END ? Ref::ok : Ref::corrupt;
}
