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

// The same for a sparse document: `before` holds only some members of the
// top-level object in text (those the edits touch); the members it lacks
// and `after` lacks too are kept as they are.
std::string rewrite_sparse(std::string_view text, const json::value& before, const json::value& after,
                           const json::Layout& layout);

// The same, but all whitespace redone in `layout` (for --indent/--compact);
// numbers and strings that did not change still keep their text.
std::string reformat(std::string_view text, const json::value& before, const json::value& after,
                     const json::Layout& layout);

}  // namespace loopkit
