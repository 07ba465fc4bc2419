// UTF-8 as JSON text needs it (json_utf8.cpp), declared without Boost.JSON:
// the lock records and the lock store check names and hosts with it, and
// the lock tools compile no Boost.JSON header (tests/check-includes).
#pragma once
#include <string>
#include <string_view>

namespace loopkit::json {

// well-formed UTF-8: no overlong forms, surrogates or code points past U+10FFFF
bool is_utf8(std::string_view s);
// s with every byte that is not part of valid UTF-8 replaced by U+FFFD
std::string to_utf8(std::string_view s);

}  // namespace loopkit::json
