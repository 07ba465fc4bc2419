// Completion of JSON paths for the shells: the member names (or indices)
// of the state file already on the command line (state-get FILE st<TAB>).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace loopkit {

// The paths that complete WORD in the document of FILE, each beginning
// with WORD as typed: its last segment completed with every member name
// (or index) of the value before it. A name that a bare path cannot spell
// is written ["quoted"]. A missing, unreadable or invalid file, a WORD
// that names no object or array, or malformed text give none: completion
// never fails.
std::vector<std::string> complete_path(const std::string& file, std::string_view word);

}  // namespace loopkit
