// The allocation-free check that text is one JSON document: Boost.JSON's
// parser with a handler that builds nothing. core/scan.cpp does its own
// validating pass and asks this one only for the wording of an error, so
// that a bad file is reported as json::parse would report it.
#pragma once
#include <string_view>

namespace loopkit {

// Checks that text is exactly one JSON document, allocating nothing; the
// same errors as json::parse (exit 3).
void validate_json(std::string_view text, std::string_view subject);

}  // namespace loopkit
