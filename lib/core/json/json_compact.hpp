// Valid JSON text printed as core/json/json.hpp prints the value json::parse
// reads from it, without a document: json::compact's text, json::raw_text's
// and the kind of integer a number is. What a reader with no JSON library
// (event-show: issue 24) needs to print what the document-based one printed.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loopkit {

// json::compact(json::parse(text)) for valid text: no whitespace, strings
// escaped as json::quote escapes them, numbers as number_text writes them
// (-0 is 0, 1.0 is 1, 1E2 is 100), a name given twice once, in its first
// place with its last value.
void append_compact_json(std::string& out, std::string_view text);
std::string compact_json(std::string_view text);
// json::raw_text: a string's characters, anything else compact_json.
std::string raw_json(std::string_view text);

// A number's text as json::parse reads an integer: int64 when it fits, else
// uint64 (is_unsigned); nullopt for any other value (a double, not a number).
struct JsonInteger {
  int64_t i = 0;
  uint64_t u = 0;
  bool is_unsigned = false;
};
std::optional<JsonInteger> json_integer(std::string_view text);

}  // namespace loopkit
