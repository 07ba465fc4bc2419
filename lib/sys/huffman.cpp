#include "sys/huffman.hpp"

#include <algorithm>
#include <vector>

namespace loopkit {

namespace {

// The used symbols by frequency, then symbol (insertion: at most 288 of
// them, where std::stable_sort was 4 KB more in each tool that writes gzip)
std::vector<std::int32_t> by_weight(const std::uint32_t* freq, std::size_t n) {
  std::vector<std::int32_t> used;
  for (std::size_t i = 0; i < n; ++i)
    if (freq[i]) used.push_back(static_cast<std::int32_t>(i));
  for (std::size_t i = 1; i < used.size(); ++i)
    for (std::size_t j = i; j > 0 && freq[used[j]] < freq[used[j - 1]]; --j) std::swap(used[j], used[j - 1]);
  return used;
}

// Huffman's code by the two queues (sorted leaves, internal nodes made in
// order of weight; a leaf first on a tie): each symbol's depth, and the
// deepest
unsigned huffman_lengths(const std::uint32_t* freq, const std::vector<std::int32_t>& used, std::uint8_t* lengths) {
  std::size_t m = used.size(), leaf = 0, node = m;
  std::vector<std::uint64_t> weight(2 * m - 1);
  std::vector<std::uint32_t> parent(2 * m - 1);
  for (std::size_t i = 0; i < m; ++i) weight[i] = freq[used[i]];
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
      lengths[used[i]] = static_cast<std::uint8_t>(std::min<std::uint64_t>(weight[i], 255));
      deepest = std::max(deepest, unsigned(lengths[used[i]]));
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

void count_leaves(const std::vector<Item>& items, std::int32_t i, std::uint8_t* lengths) {
  const Item& x = items[i];
  if (x.sym >= 0) {
    ++lengths[x.sym];
    return;
  }
  count_leaves(items, x.left, lengths);
  count_leaves(items, x.right, lengths);
}

// the optimal code within the limit (Larmore and Hirschberg)
void package_merge(const std::uint32_t* freq, const std::vector<std::int32_t>& used, unsigned limit,
                   std::uint8_t* lengths) {
  std::size_t m = used.size();
  std::vector<Item> items;
  items.reserve(m * (limit + 1));
  for (std::int32_t s : used) items.push_back({freq[s], -1, -1, s});
  std::vector<std::int32_t> list(m), next;
  for (std::size_t i = 0; i < m; ++i) list[i] = static_cast<std::int32_t>(i);
  // each round: the previous list paired into packages, merged with the
  // leaves by weight (a leaf before a package of the same weight)
  for (unsigned round = 1; round < limit; ++round) {
    next.clear();
    std::size_t leaf = 0, pack = 0, packs = list.size() / 2;
    while (leaf < m || pack < packs) {
      std::uint64_t w = pack < packs ? items[list[2 * pack]].weight + items[list[2 * pack + 1]].weight : 0;
      if (leaf < m && (pack == packs || items[leaf].weight <= w)) {
        next.push_back(static_cast<std::int32_t>(leaf++));
      } else {
        items.push_back({w, list[2 * pack], list[2 * pack + 1], -1});
        next.push_back(static_cast<std::int32_t>(items.size() - 1));
        ++pack;
      }
    }
    list.swap(next);
  }
  // a symbol's length: how many of the first 2m - 2 items hold it
  for (std::int32_t s : used) lengths[s] = 0;
  for (std::size_t i = 0; i < 2 * m - 2; ++i) count_leaves(items, list[i], lengths);
}

}  // namespace

void limited_code_lengths(const std::uint32_t* freq, std::size_t n, unsigned limit, std::uint8_t* lengths) {
  std::fill(lengths, lengths + n, 0);
  std::vector<std::int32_t> used = by_weight(freq, n);
  if (used.size() < 2) {  // one symbol, or none: two codes of one bit
    for (std::int32_t i = 0; used.size() < 2; ++i)
      if (used.empty() || used[0] != i) used.push_back(i);
    lengths[used[0]] = lengths[used[1]] = 1;
    return;
  }
  if (huffman_lengths(freq, used, lengths) > limit) package_merge(freq, used, limit, lengths);
}

}  // namespace loopkit
