#include "sys/gz/huffman.hpp"

#include <algorithm>
#include <array>
#include <memory>

namespace loopkit {

namespace {

// fixed arrays, not vectors: their growth was 2 KB more in each tool that
// writes gzip
constexpr std::size_t kMaxSymbols = 288;

struct Used {
  std::array<std::int32_t, kMaxSymbols> sym;
  std::size_t size = 0;
};

// The used symbols by frequency, then symbol (insertion: at most 288 of
// them, where std::stable_sort was 4 KB more in each tool that writes gzip)
Used by_weight(const std::uint32_t* freq, std::size_t n) {
  Used used;
  for (std::size_t i = 0; i < n; ++i)
    if (freq[i]) used.sym[used.size++] = static_cast<std::int32_t>(i);
  for (std::size_t i = 1; i < used.size; ++i)
    for (std::size_t j = i; j > 0 && freq[used.sym[j]] < freq[used.sym[j - 1]]; --j)
      std::swap(used.sym[j], used.sym[j - 1]);
  return used;
}

// Huffman's code by the two queues (sorted leaves, internal nodes made in
// order of weight; a leaf first on a tie): each symbol's depth, and the
// deepest
unsigned huffman_lengths(const std::uint32_t* freq, const Used& used, std::uint8_t* lengths) {
  std::size_t m = used.size, leaf = 0, node = m;
  std::array<std::uint64_t, 2 * kMaxSymbols> weight;
  std::array<std::uint32_t, 2 * kMaxSymbols> parent;
  for (std::size_t i = 0; i < m; ++i) weight[i] = freq[used.sym[i]];
  auto take = [&](std::size_t made) {
    std::size_t i = leaf < m && (node == made || weight[leaf] <= weight[node]) ? leaf++ : node++;
    parent[i] = static_cast<std::uint32_t>(made);
    return weight[i];
  };
  for (std::size_t made = m; made < 2 * m - 1; ++made) weight[made] = take(made) + take(made);
  // depths from the root down, kept in weight's place
  unsigned deepest = 0;
  weight[2 * m - 2] = 0;
  for (std::size_t i = 2 * m - 2; i-- > 0;) {
    weight[i] = weight[parent[i]] + 1;
    if (i < m) {
      lengths[used.sym[i]] = static_cast<std::uint8_t>(std::min<std::uint64_t>(weight[i], 255));
      deepest = std::max(deepest, unsigned(lengths[used.sym[i]]));
    }
  }
  return deepest;
}

// package-merge: a leaf is a symbol, a package two items of the list before
struct Item {
  std::uint64_t weight;
  std::int32_t left, right;
  std::int32_t sym;  // -1: a package
};

void count_leaves(const Item* items, std::int32_t i, std::uint8_t* lengths) {
  const Item& x = items[i];
  if (x.sym >= 0) {
    ++lengths[x.sym];
    return;
  }
  count_leaves(items, x.left, lengths);
  count_leaves(items, x.right, lengths);
}

// the optimal code within the limit (Larmore and Hirschberg)
void package_merge(const std::uint32_t* freq, const Used& used, unsigned limit, std::uint8_t* lengths) {
  std::size_t m = used.size, made = m;  // a list holds at most 2m - 1 items
  std::unique_ptr<Item[]> items(new Item[m * limit]);
  std::array<std::int32_t, 2 * kMaxSymbols> list, next;
  for (std::size_t i = 0; i < m; ++i) {
    items[i] = {freq[used.sym[i]], -1, -1, used.sym[i]};
    list[i] = static_cast<std::int32_t>(i);
  }
  // each round: the previous list paired into packages, merged with the
  // leaves by weight (a leaf before a package of the same weight)
  std::size_t listed = m;
  for (unsigned round = 1; round < limit; ++round) {
    std::size_t leaf = 0, pack = 0, packs = listed / 2, n = 0;
    while (leaf < m || pack < packs) {
      std::uint64_t w = pack < packs ? items[list[2 * pack]].weight + items[list[2 * pack + 1]].weight : 0;
      if (leaf < m && (pack == packs || items[leaf].weight <= w)) {
        next[n++] = static_cast<std::int32_t>(leaf++);
      } else {
        items[made] = {w, list[2 * pack], list[2 * pack + 1], -1};
        next[n++] = static_cast<std::int32_t>(made++);
        ++pack;
      }
    }
    std::swap(list, next);
    listed = n;
  }
  // a symbol's length: how many of the first 2m - 2 items hold it
  for (std::size_t i = 0; i < m; ++i) lengths[used.sym[i]] = 0;
  for (std::size_t i = 0; i < 2 * m - 2; ++i) count_leaves(items.get(), list[i], lengths);
}

}  // namespace

void limited_code_lengths(const std::uint32_t* freq, std::size_t n, unsigned limit, std::uint8_t* lengths) {
  std::fill(lengths, lengths + n, 0);
  Used used = by_weight(freq, n);
  if (used.size < 2) {  // one symbol, or none: two codes of one bit
    for (std::int32_t i = 0; used.size < 2; ++i)
      if (used.size == 0 || used.sym[0] != i) used.sym[used.size++] = i;
    lengths[used.sym[0]] = lengths[used.sym[1]] = 1;
    return;
  }
  if (huffman_lengths(freq, used, lengths) > limit) package_merge(freq, used, limit, lengths);
}

}  // namespace loopkit
