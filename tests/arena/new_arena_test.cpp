// lib/sys/base/new_arena.cpp, the tools' operator new, in a program of its own
// (the unit tests keep libstdc++'s): every block aligned and usable, small
// blocks from the arena until it is full, large ones and the rest from
// malloc, delete of either kind safe.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace {
bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % __STDCPP_DEFAULT_NEW_ALIGNMENT__ == 0; }

// whether two blocks of the given sizes overlap
bool overlap(const unsigned char* a, std::size_t an, const unsigned char* b, std::size_t bn) {
  return a < b + bn && b < a + an;
}
}  // namespace

TEST_CASE("small blocks are aligned, distinct and usable until the arena is full, then from malloc", "[arena]") {
  std::vector<std::pair<unsigned char*, std::size_t>> blocks;
  // more than the arena holds (256 KiB) in blocks of 1 to 100 bytes
  std::size_t total = 0;
  for (std::size_t i = 0; total < 600 * 1024; ++i) {
    const std::size_t n = i % 100 + 1;
    auto* p = static_cast<unsigned char*>(::operator new(n));
    REQUIRE(aligned(p));
    std::memset(p, static_cast<int>(i & 0xff), n);
    blocks.emplace_back(p, n);
    total += n;
  }
  // each block still holds what was written to it: none overlaps another
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const auto [p, n] = blocks[i];
    for (std::size_t k = 0; k < n; ++k) REQUIRE(p[k] == static_cast<unsigned char>(i & 0xff));
  }
  for (std::size_t i = 1; i < blocks.size(); ++i)
    REQUIRE_FALSE(overlap(blocks[i - 1].first, blocks[i - 1].second, blocks[i].first, blocks[i].second));
  // the arena is full: a block of no bytes comes from malloc, and goes back there
  void* none = ::operator new(0);
  CHECK(aligned(none));
  ::operator delete(none);
  for (auto [p, n] : blocks) ::operator delete(p, n);
}

TEST_CASE("a zero-byte block is a distinct pointer; large blocks and arrays work", "[arena]") {
  void* a = ::operator new(0);
  void* b = ::operator new(0);
  CHECK(a != b);
  ::operator delete(a);
  ::operator delete(b);
  auto big = std::make_unique<unsigned char[]>(1 << 20);
  CHECK(aligned(big.get()));
  big[0] = 1;
  big[(1 << 20) - 1] = 2;
  CHECK(big[0] + big[(1 << 20) - 1] == 3);
  std::string s(100000, 'x');
  std::set<std::string> words;
  for (int i = 0; i < 20000; ++i) words.insert(std::to_string(i) + s.substr(0, static_cast<std::size_t>(i % 50)));
  CHECK(words.size() == 20000);
  CHECK(words.count("19999" + std::string(49, 'x')) == 1);
}

TEST_CASE("nothrow and array forms go through it too", "[arena]") {
  int* p = new (std::nothrow) int[10]();
  REQUIRE(p);
  CHECK(aligned(p));
  p[9] = 7;
  CHECK(p[9] + p[0] == 7);
  delete[] p;
  CHECK_THROWS_AS(::operator new(static_cast<std::size_t>(-1) / 2), std::bad_alloc);
}
