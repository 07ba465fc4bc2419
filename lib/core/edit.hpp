// Faithful rewriting, after VS Code's jsonc-parser: the new document's text
// is the old text with only the changed values' spans replaced, so every
// other byte (number spellings like 1.0, odd indentation, key order) survives.
#pragma once
#include <string>
#include <string_view>

#include "core/json.hpp"

namespace loopkit {

// `text` must be valid JSON whose parse is `before`. Unchanged values keep
// their bytes; changed and new ones are written in the style of their
// surroundings (or of `layout` where there is none to copy).
std::string rewrite_faithfully(std::string_view text, const json::value& before, const json::value& after,
                               const json::Layout& layout);

// A stand-in for the value whose text starts at `offset`: a document built
// with stand-ins for what no edit touches (see state.cpp) is rewritten with
// those values' bytes, never parsed. Equal stand-ins mean the same value.
json::value stand_in(std::size_t offset);
bool is_stand_in(const json::value& v);
std::size_t stand_in_offset(const json::value& v);
// What a stand-in for a value of text stands for, one level deep: an object
// or array of stand-ins for its items (of a duplicated member name, the
// last), or a scalar's value with its number literal kept.
class JsonText;
json::value open_stand_in(const JsonText& text, const json::value& v);

// The same on text already walked (its items are remembered). `before` may
// be a stand-in: the rewrite opens what it needs. Of a duplicated member
// name only the last copy is compared and changed; the earlier copies keep
// their bytes (and all go when the name is deleted).
std::string rewrite_faithfully(const JsonText& text, const json::value& before, const json::value& after,
                               const json::Layout& layout);

// The same, but all whitespace redone in `layout` (for --indent/--compact);
// numbers and strings that did not change still keep their text.
std::string reformat(std::string_view text, const json::value& before, const json::value& after,
                     const json::Layout& layout);
std::string reformat(const JsonText& text, const json::value& before, const json::value& after,
                     const json::Layout& layout);

}  // namespace loopkit
