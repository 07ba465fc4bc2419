#include "sys/gz/gz.hpp"

#include <algorithm>
#include <cstdint>

#include "sys/gz/crc32.hpp"
#include "sys/gz/deflate.hpp"
#include "sys/base/error.hpp"
#include "sys/gz/inflate.hpp"

namespace loopkit {

bool is_gzip(std::string_view d, std::string_view name) {
  if (d.size() >= 2 && static_cast<unsigned char>(d[0]) == 0x1f && static_cast<unsigned char>(d[1]) == 0x8b)
    return true;
  return !d.empty() && name.size() >= 3 && name.substr(name.size() - 3) == ".gz";
}

namespace {
constexpr std::size_t kMinLimit = std::size_t(256) << 20;
constexpr std::size_t kRatio = 100;
constexpr std::size_t kNone = std::size_t(-1);

unsigned byte_at(std::string_view d, std::size_t i) { return static_cast<unsigned char>(d[i]); }

std::uint32_t le32_at(std::string_view d, std::size_t i) {
  return std::uint32_t(byte_at(d, i)) | std::uint32_t(byte_at(d, i + 1)) << 8 | std::uint32_t(byte_at(d, i + 2)) << 16 |
         std::uint32_t(byte_at(d, i + 3)) << 24;
}

// gzip's trailer ends with the last member's size (mod 2^32): a first
// guess of the output's size that spares most regrowth (and its copies),
// never past deflate's own limit (1032 to 1), whatever the trailer claims
std::size_t size_hint(std::string_view data) {
  if (data.size() < 18) return 0;
  return std::min<std::size_t>(le32_at(data, data.size() - 4), data.size() * 1032);
}

bool only_zeros(std::string_view d) {
  return std::all_of(d.begin(), d.end(), [](char b) { return b == 0; });
}

// Where the deflate data of the member header at d[at] starts (RFC 1952
// 2.3), or kNone: not a header zlib's inflate takes (magic, method 8, no
// reserved flag, every field whole, the header CRC when FHCRC asks for one).
std::size_t skip_header(std::string_view d, std::size_t at) {
  enum : unsigned { kHcrc = 2, kExtra = 4, kName = 8, kComment = 16, kReserved = 0xe0 };
  if (d.size() - at < 10 || byte_at(d, at) != 0x1f || byte_at(d, at + 1) != 0x8b || byte_at(d, at + 2) != 8)
    return kNone;
  unsigned flags = byte_at(d, at + 3);
  if (flags & kReserved) return kNone;
  std::size_t p = at + 10;
  if (flags & kExtra) {
    if (d.size() - p < 2) return kNone;
    std::size_t xlen = byte_at(d, p) | byte_at(d, p + 1) << 8;
    if (d.size() - p - 2 < xlen) return kNone;
    p += 2 + xlen;
  }
  for (unsigned text : {unsigned(kName), unsigned(kComment)}) {
    if (!(flags & text)) continue;
    p = d.find('\0', p);
    if (p == std::string_view::npos) return kNone;
    ++p;
  }
  if (flags & kHcrc) {
    if (d.size() - p < 2) return kNone;
    std::uint32_t crc = gzip_crc32(d.substr(at, p - at)) & 0xffff;
    if (crc != (byte_at(d, p) | byte_at(d, p + 1) << 8)) return kNone;
    p += 2;
  }
  return p;
}
// One member at data[at], its bytes appended to out; at moves past it.
Inflated read_member(std::string_view data, std::size_t& at, std::string& out, std::size_t limit) {
  at = skip_header(data, at);
  if (at == kNone) return Inflated::corrupt;
  std::size_t start = out.size();
  if (Inflated r = inflate_raw(data, at, out, limit); r != Inflated::ok) return r;
  if (data.size() - at < 8) return Inflated::corrupt;
  std::string_view member = std::string_view(out).substr(start);
  bool whole = le32_at(data, at) == gzip_crc32(member) && le32_at(data, at + 4) == std::uint32_t(member.size());
  at += 8;
  return whole ? Inflated::ok : Inflated::corrupt;
}

// out of line: the messages are built once in the binary, not at each use
[[noreturn, gnu::noinline, gnu::cold]] void fail_gunzip(Inflated r, std::string_view subject, std::size_t limit) {
  if (r == Inflated::past_limit)
    fail_data(quoted(subject) + ": gzip data inflates past " + std::to_string(limit) +
              " bytes, the limit for its size (100 times it, at least 256 MiB)");
  fail_data(quoted(subject) + ": corrupt gzip data");
}
}  // namespace

std::size_t gunzip_limit(std::size_t gz_size) {
  return gz_size > kMinLimit / kRatio ? std::max(kMinLimit, gz_size * kRatio) : kMinLimit;
}

std::string gunzip(std::string_view data, std::string_view subject) {
  return gunzip(data, subject, gunzip_limit(data.size()));
}

std::string gunzip(std::string_view data, std::string_view subject, std::size_t limit) {
  std::string out;
  out.reserve(std::min(limit, std::max({size_hint(data), data.size() * 4, std::size_t(1024)})) + 64);
  std::size_t at = 0;
  do {
    if (Inflated r = read_member(data, at, out, limit); r != Inflated::ok) fail_gunzip(r, subject, limit);
  } while (at < data.size() && !only_zeros(data.substr(at)));
  return out;
}

std::string gzip(std::string_view data) {
  // RFC 1952's header as zlib's deflate at level 6 wrote it (no name, time
  // 0, no extra flags, Unix), so that a file's bytes stay what they were
  std::string out("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10);
  out.reserve(10 + data.size() / 4 + 64);
  deflate_raw(data, out);
  std::uint32_t crc = gzip_crc32(data), size = static_cast<std::uint32_t>(data.size());  // ISIZE: mod 2^32
  for (std::uint32_t v : {crc, size})
    for (int k = 0; k < 32; k += 8) out.push_back(static_cast<char>(v >> k));
  return out;
}

}  // namespace loopkit
