#include "sys/gz.hpp"

#include <zlib.h>

#include "sys/error.hpp"

namespace loopkit {

bool is_gzip(std::string_view d, std::string_view name) {
  if (d.size() >= 2 && static_cast<unsigned char>(d[0]) == 0x1f && static_cast<unsigned char>(d[1]) == 0x8b)
    return true;
  return !d.empty() && name.size() >= 3 && name.substr(name.size() - 3) == ".gz";
}

std::string gunzip(std::string_view data, std::string_view subject) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) fail(Exit::system, "cannot start zlib");
  std::string out;
  out.resize(data.size() * 4 + 1024);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  int rc;
  do {
    if (z.total_out >= out.size()) out.resize(out.size() * 2);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + z.total_out);
    z.avail_out = static_cast<uInt>(out.size() - z.total_out);
    rc = inflate(&z, Z_NO_FLUSH);
    // concatenated gzip members, as gzip(1) allows
    if (rc == Z_STREAM_END && z.avail_in > 0) rc = inflateReset(&z) == Z_OK ? Z_OK : Z_DATA_ERROR;
  } while (rc == Z_OK || (rc == Z_BUF_ERROR && z.avail_out == 0));
  out.resize(z.total_out);
  inflateEnd(&z);
  if (rc != Z_STREAM_END) fail_data(quoted(subject) + ": corrupt gzip data");
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
