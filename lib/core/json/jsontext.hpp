// The check that text is one JSON document: the validating
// reader of core/json/json_members, which judges and words text as json::parse
// does. core/scan/scan.cpp does its own validating pass and asks this one only
// for the wording of an error, so that a bad file is reported as json::parse
// would report it.
#pragma once
#include <string_view>

namespace loopkit {

// Checks that text is exactly one JSON document; the same errors as
// json::parse (exit 3).
void validate_json(std::string_view text, std::string_view subject);

}  // namespace loopkit
