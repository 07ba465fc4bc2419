// One validating pass over JSON text that records only what the caller's
// paths need. The pass checks everything json::parse checks (RFC 8259
// grammar, UTF-8 in strings, surrogate pairs in escapes, nesting within
// json::max_depth, numbers within double range) without building a
// document; containers that no wanted path enters are skipped by a tight
// loop, so memory does not grow with the file.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/scan/path.hpp"

namespace loopkit::scan {

inline constexpr std::size_t none = static_cast<std::size_t>(-1);

// What is wanted inside one value: a trie of path segments.
struct Want {
  std::map<std::string, Want, std::less<>> members;  // .name
  std::set<long long> indices;                       // [i]; negative counts from the end
  bool all = false;                                  // every item ([])
  std::unique_ptr<Want> element;                     // what is wanted inside every picked element or [] item

  // Adds the segments [from, end) of path: each key, index or [] becomes a
  // level of the trie. Returns the node the path ends at.
  Want& add(const Path& path, std::size_t from = 0);
  Want& element_want();
  // Merges this into other (a deep union).
  void merge_into(Want& other) const;
  // Call once all paths are added: a member named by a path and also listed
  // by [] must carry both wants, since one picked copy serves both.
  void settle();
  bool enters() const { return !members.empty() || !indices.empty() || all; }
};

// A member or an element, as offsets into the text.
struct Item {
  std::size_t prefix = none;  // what precedes it: whitespace, and a comma for all but the first
  std::size_t key = none;     // start of the key literal (members); == value for elements
  std::size_t value = none;   // start of the value
  std::size_t end = none;     // end of the value
};

// A value a wanted path reaches. For a container the path goes into, what a
// rewrite needs: its item count, the items that show its style (the first,
// the second, the last) and the picked items, in text order.
struct Child;
using MemberIndex = std::map<std::string, std::size_t, std::less<>>;  // name -> its last copy in children
struct Node {
  std::size_t begin = 0, end = 0;  // the value's bytes
  bool entered = false;            // a container whose items were looked at
  std::size_t count = 0;           // its items, when entered
  Item first, second, last;
  std::vector<Child> children;
  // member()'s index of an object's picked children, built at the first
  // look-up in a big one: N look-ups (a queue's items in one state-get) cost
  // N log N, not N squared. Positions, so a copy of the node may share it.
  mutable std::shared_ptr<const MemberIndex> names;
};
struct Child {
  std::size_t index = 0;  // position among the container's items
  Item item;
  std::size_t next = none;  // where the following item's key (or value) starts; none if last
  Node node;
};

// Scans the whole text (exactly one document, whitespace around it) and
// returns the root; invalid text is exit 3 with json::parse's message,
// naming subject. Every member whose name is wanted is picked, duplicates
// too (the last copy is the one that counts); an array picks the wanted
// indices (negative ones through a window of the last items) and every
// item when all is set.
//
// passed, when given, is called with an offset each time the scan moves
// past another 16 MiB: the scan reads nothing before that offset again, so
// a caller that maps a big file may drop those pages and keep its memory
// bounded whatever the file's size.
Node scan(std::string_view text, const Want& want, std::string_view subject,
          const std::function<void(std::size_t)>& passed = {});

// The decoded name of a member whose key literal starts at key.
std::string key_name(std::string_view text, std::size_t key);
// The end of the string literal at p (p at its opening quote); text valid.
// Bounded all the same (at most text's end): a mapped file cut short under
// the reader reads as zeros past its new end (sys/fs/mapped.hpp).
std::size_t string_end(std::string_view text, std::size_t p);

// The picked child that counts for a member name (the last copy), or null.
const Child* member(std::string_view text, const Node& object, std::string_view name);
// The picked element at index (negative from the end), or null when out of range.
const Child* element(const Node& array, long long index);

}  // namespace loopkit::scan
