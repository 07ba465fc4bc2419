// JSON documents: Boost.JSON values, a strict parser with a deliberate depth
// limit, layout detection and a serializer whose numbers read like jq's.
#pragma once
#include <boost/json/storage_ptr.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/utf8.hpp"

namespace loopkit::json {

using boost::json::array;
using boost::json::object;
using boost::json::string;
using boost::json::value;

// Boost's default of 32 is too low for real files; 1000 levels still fits
// our recursive walkers in a default 8 MiB stack many times over.
inline constexpr std::size_t max_depth = 1000;

// Which number literals a parse keeps as text (see number_literal): none;
// integers too big for 64 bits (a reader prints their digits); or every
// literal whose shortest text differs (`1e2`, `1.0`: what a caller wrote
// is what the file gets).
enum class Literals { none, big_integers, as_written };

// Exactly one document (surrounding whitespace allowed); anything else is
// exit 3: "'SUBJECT': not valid JSON: REASON at line L, column C". A number
// out of range (1e400) is not valid; one too small for a double (1e-400,
// 0e400) reads as 0. `storage` lets a read-only caller parse into a
// monotonic arena.
value parse(std::string_view text, std::string_view subject, boost::json::storage_ptr storage = {},
            Literals keep = Literals::none);
// Zero or more documents one after another (JSON lines, concatenated JSON).
std::vector<value> parse_many(std::string_view text, std::string_view subject, boost::json::storage_ptr storage = {},
                              Literals keep = Literals::none);

// A number kept as its JSON text: a string value no data can hold by chance
// (0xFF, which no UTF-8 text holds, and a per-run random tag before the text), which the serializer
// writes as the bare literal.
value number_literal(std::string_view text, boost::json::storage_ptr storage = {});
bool is_number_literal(const value& v);
std::string_view literal_text(const value& v);  // v must be a number literal
bool is_numeric(const value& v);                // a number or a number literal
// The double nearest to a JSON number's text, as strtod rounds it (±inf
// past the range, ±0 below it); Boost.JSON 1.81's own may be one unit in
// the last place off on long texts
double nearest_double(std::string_view number_text);
// Equal as JSON values: numbers by value (100, 1e2, 100.0; 0 and -0), objects
// whatever their order. How --expect and --require compare.
bool equal(const value& a, const value& b);
// Containers nested in v, itself included: 0 for a scalar, 1 for [] or [1].
std::size_t depth(const value& v);

struct Layout {
  bool pretty = true;         // members on their own lines
  std::string indent = "  ";  // one level, when pretty
  bool space_after_colon = true;
  bool space_after_comma = false;  // compact layouts only ("a": 1, "b": 2)
  bool final_newline = true;
};
Layout default_layout();                      // 2 spaces, as jq writes
Layout compact_layout();                      // one line, no spaces
Layout detect_layout(std::string_view text);  // of an existing document's text

// The whole document in a layout (with the final newline if the layout has one).
std::string to_text(const value& v, const Layout& layout);
// Append v at nesting whose current line indent is `indent`. A hook, when
// given, sees every value first and may write it itself (returning true).
using WriteHook = bool (*)(std::string& out, const value& v, const void* context);
void write_value(std::string& out, const value& v, const Layout& layout, const std::string& indent,
                 WriteHook hook = nullptr, const void* context = nullptr);
std::string compact(const value& v);    // one line, no spaces: {"a":1}
std::string quote(std::string_view s);  // a JSON string literal
// 5, 0.25, 1e+100: shortest round trip; a number literal's own text. A
// number that is not finite cannot be JSON: exit 3.
std::string number_text(const value& v);
// strings raw, everything else compact JSON (state-get's default output)
std::string raw_text(const value& v);

}  // namespace loopkit::json
