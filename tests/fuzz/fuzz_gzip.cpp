// libFuzzer target: gzip input (state files, saves and logs ending in .gz).
// The whole input is gzip data. gunzip, with a small inflate limit, fails
// only with exit 3, and agrees with a reference that inflates each member
// with a fresh zlib stream in small steps: the same bytes, or both past the
// limit, or both refusing the data. Then the input as plain bytes, cut in
// two and gzipped member by member (`gzip >>`), reads back whole.
#include <zlib.h>

#include <algorithm>
#include <optional>

#include "fuzz_common.hpp"
#include "sys/gz.hpp"

using namespace loopkit;

namespace {

constexpr std::size_t kLimit = 1 << 20;

enum class Ref { ok, corrupt, too_big };

// Member by member, 4 KiB of output at a time; trailing zero bytes end it.
Ref reference(std::string_view in, std::string& out) {
  const Bytef* p = reinterpret_cast<const Bytef*>(in.data());
  std::size_t left = in.size();
  do {
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) fuzz::finding("zlib did not start");
    z.next_in = const_cast<Bytef*>(p);
    z.avail_in = static_cast<uInt>(left);
    int rc = Z_OK;
    while (rc == Z_OK) {
      Bytef buf[4096];
      z.next_out = buf;
      z.avail_out = sizeof buf;
      rc = inflate(&z, Z_NO_FLUSH);
      out.append(reinterpret_cast<char*>(buf), sizeof buf - z.avail_out);
      if (out.size() > kLimit) rc = Z_MEM_ERROR;
      else if (rc == Z_BUF_ERROR && z.avail_out == 0) rc = Z_OK;
    }
    p += left - z.avail_in;
    left = z.avail_in;
    inflateEnd(&z);
    if (rc == Z_MEM_ERROR) return Ref::too_big;
    if (rc != Z_STREAM_END) return Ref::corrupt;
  } while (left > 0 && !std::all_of(p, p + left, [](Bytef b) { return b == 0; }));
  return Ref::ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::optional<std::string> got;
  std::string error;
  try {
    got = gunzip(in, "input", kLimit);
    fuzz::check(got->size() <= kLimit, "gunzip went past its limit");
  } catch (const Error& e) {
    fuzz::check_code(e, {Exit::data}, "gunzip");
    error = e.what();
  }
  std::string want;
  Ref ref = reference(in, want);
  if (ref == Ref::ok) fuzz::check(got && *got == want, "gunzip and the reference read different bytes: " + error);
  if (ref == Ref::too_big) fuzz::check(error.find("inflates past") != std::string::npos, "no limit error: " + error);
  if (ref == Ref::corrupt) fuzz::check(error.find("corrupt gzip data") != std::string::npos, "no corrupt error");

  std::size_t half = size / 2;
  std::string members = gzip(in.substr(0, half)) + gzip(in.substr(half));
  fuzz::check(gunzip(members, "members") == in, "two gzip members do not read back as their bytes");
  fuzz::check(gunzip(gzip(in) + std::string(7, '\0'), "padded") == in, "trailing zeros are not ignored");
  return 0;
}
