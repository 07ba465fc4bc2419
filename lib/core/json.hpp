// JSON documents: Boost.JSON values, a strict parser with a deliberate depth
// limit, layout detection and a serializer whose numbers read like jq's.
#pragma once
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace loopkit::json {

using boost::json::array;
using boost::json::object;
using boost::json::string;
using boost::json::value;

// Boost's default of 32 is too low for real files; 1000 levels still fits
// our recursive walkers in a default 8 MiB stack many times over.
inline constexpr std::size_t max_depth = 1000;

// Exactly one document (surrounding whitespace allowed); anything else is
// exit 3: "'SUBJECT': not valid JSON: REASON at line L, column C".
// `storage` lets a read-only caller parse into a monotonic arena.
value parse(std::string_view text, std::string_view subject, boost::json::storage_ptr storage = {});
// Zero or more documents one after another (JSON lines, concatenated JSON).
std::vector<value> parse_many(std::string_view text, std::string_view subject,
                              boost::json::storage_ptr storage = {});

struct Layout {
  bool pretty = true;            // members on their own lines
  std::string indent = "  ";     // one level, when pretty
  bool space_after_colon = true;
  bool space_after_comma = false;  // compact layouts only ("a": 1, "b": 2)
  bool final_newline = true;
};
Layout default_layout();                    // 2 spaces, as jq writes
Layout compact_layout();                    // one line, no spaces
Layout detect_layout(std::string_view text);  // of an existing document's text

// The whole document in a layout (with the final newline if the layout has one).
std::string to_text(const value& v, const Layout& layout);
// Append v at nesting whose current line indent is `indent`. A hook, when
// given, sees every value first and may write it itself (returning true).
using WriteHook = bool (*)(std::string& out, const value& v, const void* context);
void write_value(std::string& out, const value& v, const Layout& layout, const std::string& indent,
                 WriteHook hook = nullptr, const void* context = nullptr);
std::string compact(const value& v);  // one line, no spaces: {"a":1}
std::string quote(std::string_view s);  // a JSON string literal
// well-formed UTF-8: no overlong forms, surrogates or code points past U+10FFFF
bool is_utf8(std::string_view s);
std::string number_text(const value& v);  // 5, 0.25, 1e+100: shortest round trip
// strings raw, everything else compact JSON (state-get's default output)
std::string raw_text(const value& v);

}  // namespace loopkit::json
