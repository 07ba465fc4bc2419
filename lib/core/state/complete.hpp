// Completion of JSON paths for the shells: the member names (or indices)
// of the state file already on the command line (state-get FILE st<TAB>),
// and the values of state-set's assignments (status:=t<TAB>). The shells'
// scripts (completions/) take the quoting and "~" off FILE and WORD and
// quote what they insert; this sees and gives plain text.
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
//
// A WORD that is an assignment (state-set's PATH=TEXT, PATH:=JSON, ...;
// loopkit(7), ASSIGNMENTS) completes its value instead: the JSON literals
// true, false and null after ":=" (and "[]:=", "?:="), nothing after any
// other operator: a person types the text, the number or the object.
std::vector<std::string> complete_path(const std::string& file, std::string_view word);

}  // namespace loopkit
