// libFuzzer target: gzip input (state files, saves and logs ending in .gz).
// The whole input is gzip data. gunzip, with a small inflate limit, fails
// only with exit 3, and agrees with zlib's inflate (the reference of
// tests/unit/gunzip_reference.hpp: each member a fresh gzip-only stream,
// inflated in small steps): the same bytes, or both past the limit, or both
// refusing the data. Then the input as plain bytes, cut in two and gzipped
// member by member (`gzip >>`), reads back whole. And the input as raw
// deflate data: sys/gz/inflate writes the bytes zlib's inflate writes, up to
// where both stop (no CRC there to turn wrong bytes into "corrupt"). And
// our deflate's gzip of the input (sys/gz/deflate) reads back whole through
// zlib's inflate too, and stays within the bound of stored blocks.
#include <optional>

#include "../unit/gunzip_reference.hpp"
#include "fuzz_common.hpp"
#include "sys/gz/gz.hpp"
#include "sys/gz/inflate.hpp"

using namespace loopkit;

namespace {

constexpr std::size_t kLimit = 1 << 20;

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
  Ref ref = zlib_gunzip(in, want, kLimit);
  if (ref == Ref::ok) fuzz::check(got && *got == want, "gunzip and the reference read different bytes: " + error);
  if (ref == Ref::too_big) fuzz::check(error.find("inflates past") != std::string::npos, "no limit error: " + error);
  if (ref == Ref::corrupt) fuzz::check(error.find("corrupt gzip data") != std::string::npos, "no corrupt error");

  std::string raw, raw_want;
  std::size_t at = 0, used = 0;
  Inflated r = inflate_raw(in, at, raw, kLimit);
  Ref raw_ref = zlib_inflate_raw(in, raw_want, kLimit, used);
  fuzz::check(int(r) == int(raw_ref), "inflate_raw and zlib disagree on raw deflate data");
  if (r != Inflated::past_limit) fuzz::check(raw == raw_want, "inflate_raw and zlib wrote different bytes");
  if (r == Inflated::ok) fuzz::check(at == used, "inflate_raw and zlib end the stream at different bytes");

  std::size_t half = size / 2;
  std::string members = gzip(in.substr(0, half)) + gzip(in.substr(half));
  fuzz::check(gunzip(members, "members") == in, "two gzip members do not read back as their bytes");
  const std::string packed = gzip(in);
  fuzz::check(gunzip(packed + std::string(7, '\0'), "padded") == in, "trailing zeros are not ignored");
  std::string unpacked;
  fuzz::check(zlib_gunzip(packed, unpacked, size + 1) == Ref::ok && unpacked == in,
              "zlib's inflate does not read our deflate's gzip back as the input");
  fuzz::check(packed.size() <= size + 5 * (size / 65535 + 1) + 18, "our deflate's gzip outgrew stored blocks");
  return 0;
}
