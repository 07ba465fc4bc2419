#include "sys/gz.hpp"

#include <algorithm>
#include <zlib.h>

#include "sys/error.hpp"

namespace loopkit {

bool is_gzip(std::string_view d, std::string_view name) {
  if (d.size() >= 2 && static_cast<unsigned char>(d[0]) == 0x1f && static_cast<unsigned char>(d[1]) == 0x8b)
    return true;
  return !d.empty() && name.size() >= 3 && name.substr(name.size() - 3) == ".gz";
}

namespace {
constexpr std::size_t kMinLimit = std::size_t(256) << 20;
constexpr std::size_t kRatio = 100;
constexpr std::size_t kChunk = std::size_t(1) << 30;  // zlib counts in uInt

// gzip's trailer ends with the last member's size (mod 2^32): a first
// guess of the output's size that spares most regrowth (and its copies),
// never past deflate's own limit (1032 to 1), whatever the trailer claims
std::size_t size_hint(std::string_view data) {
  if (data.size() < 18) return 0;
  auto b = [&](std::size_t i) { return std::size_t(static_cast<unsigned char>(data[data.size() - 4 + i])); };
  return std::min(b(0) | b(1) << 8 | b(2) << 16 | b(3) << 24, data.size() * 1032);
}

bool only_zeros(const Bytef* p, std::size_t n) {
  return std::all_of(p, p + n, [](Bytef b) { return b == 0; });
}

// inflate's state with its end called on every path
struct Inflater {
  z_stream z{};
  Inflater() {
    if (inflateInit2(&z, 15 + 32) != Z_OK) fail(Exit::system, "cannot start zlib");
  }
  ~Inflater() { inflateEnd(&z); }
};
}  // namespace

std::size_t gunzip_limit(std::size_t gz_size) {
  return gz_size > kMinLimit / kRatio ? std::max(kMinLimit, gz_size * kRatio) : kMinLimit;
}

std::string gunzip(std::string_view data, std::string_view subject) {
  return gunzip(data, subject, gunzip_limit(data.size()));
}

std::string gunzip(std::string_view data, std::string_view subject, std::size_t limit) {
  Inflater inf;
  z_stream& z = inf.z;
  const Bytef* in = reinterpret_cast<const Bytef*>(data.data());
  std::size_t in_left = data.size(), used = 0;
  std::string out;
  // one byte over the limit tells a stream that reaches it from one that passes it
  auto check_limit = [&] {
    if (used > limit)
      fail_data(quoted(subject) + ": gzip data inflates past " + std::to_string(limit) +
                " bytes, the limit for its size (100 times it, at least 256 MiB)");
  };
  for (;;) {
    if (used == out.size()) {
      check_limit();
      std::size_t guess = out.empty() ? size_hint(data) : 0;
      out.resize(std::min(limit + 1, std::max({out.size() * 2, data.size() * 4, guess, std::size_t(1024)})));
    }
    z.next_in = const_cast<Bytef*>(in);
    z.avail_in = static_cast<uInt>(std::min(in_left, kChunk));
    z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    z.avail_out = static_cast<uInt>(std::min(out.size() - used, kChunk));
    const uInt avail_in = z.avail_in, avail_out = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    in += avail_in - z.avail_in;
    in_left -= avail_in - z.avail_in;
    used += avail_out - z.avail_out;
    if (rc == Z_STREAM_END) {
      if (in_left == 0 || only_zeros(in, in_left)) break;
      if (inflateReset(&z) != Z_OK) rc = Z_DATA_ERROR;  // the next member
      else continue;
    }
    if (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0)) continue;
    check_limit();
    fail_data(quoted(subject) + ": corrupt gzip data");  // Z_BUF_ERROR with room left: cut short
  }
  check_limit();
  out.resize(used);
  return out;
}

std::string gzip(std::string_view data) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    fail(Exit::system, "cannot start zlib");
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(data.size())) + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) fail(Exit::system, "cannot compress");
  return out;
}

}  // namespace loopkit
