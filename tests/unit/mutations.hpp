// Every cut, loss, change and gain of a byte of a seed text: the inputs on
// which the readers' tests compare a reader with the one it replaced.
#pragma once
#include <cstddef>
#include <random>
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

// s changed 1 to 3 times at random places: a byte of pool written over one,
// put before one or taken out, or (with cuts) the text cut there
template <std::size_t N>
std::string mutated(std::mt19937& random, std::string s, const char (&pool)[N], bool cuts = false) {
  for (int k = 1 + static_cast<int>(random() % 3); k > 0 && !s.empty(); --k) {
    const std::size_t at = random() % s.size();
    const char b = pool[random() % (N - 1)];
    switch (random() % (cuts ? 4 : 3)) {
      case 0: s[at] = b; break;
      case 1: s.insert(at, 1, b); break;
      case 2: s.erase(at, 1); break;
      default: s.resize(at);
    }
  }
  return s;
}
