// Every cut, loss, change and gain of a byte of a seed text: the inputs on
// which the readers' tests compare a reader with the one it replaced.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

// f(text, at) for each prefix of seed (at: its length), and for seed less
// its byte at, with that byte changed to each of bytes, and with each of
// bytes inserted before it
template <std::size_t N, class F>
void for_each_mutation(std::string_view seed, const unsigned char (&bytes)[N], F f) {
  const std::string s(seed);
  for (std::size_t i = 0; i <= s.size(); ++i) f(s.substr(0, i), i);
  for (std::size_t i = 0; i < s.size(); ++i) {
    f(s.substr(0, i) + s.substr(i + 1), i);
    for (unsigned char b : bytes) {
      std::string changed = s, added = s;
      changed[i] = static_cast<char>(b);
      added.insert(i, 1, static_cast<char>(b));
      f(changed, i);
      f(added, i);
    }
  }
}
