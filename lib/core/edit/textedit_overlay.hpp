// The overlay that core/edit/textedit.cpp's edits build and
// core/edit/textedit_write.cpp writes out: internal to those two files.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/scan/scan.hpp"

namespace loopkit::textedit {

struct Entry;

// A value as the edits so far left it: the file's bytes where they stand
// (orig), a new value's JSON text (fresh), or a container whose items are
// entries: over a container of the file (its untouched items stay slices
// of the text) or new (written whole).
class Overlay {
public:
  enum Kind { orig, fresh, object, array } kind = orig;
  std::string_view text;                                 // orig, fresh
  const scan::Node* scanned = nullptr;                   // orig (what the scan kept inside), file containers
  bool from_file = false;                                // object/array: over a container of the file
  std::vector<Entry> entries;                            // in order: the file's items, then new ones
  std::map<std::string, std::size_t, std::less<>> live;  // objects: the entry that counts per name
  std::size_t length = 0;                                // arrays: elements now
  std::size_t removed_originals = 0;                     // arrays: the file's elements deleted
  std::size_t originals = 0;                             // arrays: entries that are the file's (items and runs)
};

struct Entry {
  std::string name;  // members
  scan::Item span;   // the file's item (prefix, key, value, end); for a run: its first prefix and key, its last end
  bool original = false;  // an item (or run) of the file
  bool run = false;       // file elements the scan did not keep: [first, first + count)
  std::size_t first = 0, count = 1;
  bool removed = false;
  std::unique_ptr<Overlay> node;  // null for runs
};

inline bool is_json_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace loopkit::textedit
