#include "sys/etcd/base64.hpp"

#include <array>

namespace loopkit {
namespace {

constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<signed char, 256> make_decode_table() {
  std::array<signed char, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = static_cast<signed char>(i);
  return t;
}
constexpr auto decode_table = make_decode_table();

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16 | static_cast<unsigned char>(bytes[i + 1]) << 8 |
                 static_cast<unsigned char>(bytes[i + 2]);
    out += alphabet[n >> 18];
    out += alphabet[n >> 12 & 63];
    out += alphabet[n >> 6 & 63];
    out += alphabet[n & 63];
  }
  size_t left = bytes.size() - i;
  if (left) {
    unsigned n = static_cast<unsigned char>(bytes[i]) << 16;
    if (left == 2) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += alphabet[n >> 18];
    out += alphabet[n >> 12 & 63];
    out += left == 2 ? alphabet[n >> 6 & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    unsigned n = 0;
    for (int j = 0; j < 4; ++j) {
      char c = text[i + j];
      int v;
      if (c == '=' && last && j >= 2 && (j == 3 || text[i + 3] == '=')) {
        v = 0;
        ++pad;
      } else {
        v = decode_table[static_cast<unsigned char>(c)];
        if (v < 0 || pad) return std::nullopt;
      }
      n = n << 6 | static_cast<unsigned>(v);
    }
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>(n >> 8 & 255);
    if (pad < 1) out += static_cast<char>(n & 255);
  }
  return out;
}

}  // namespace loopkit
