// The rules of an edit that do not depend on how the document is held,
// internal to core/edit/assign.cpp (the value-tree reference) and
// core/edit/textedit*.cpp (the span editor every tool uses): the messages of an
// edit that cannot be made, where an index lands, and the arithmetic of +=.
// Written once here, so the reference and the editor cannot drift apart.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"

namespace loopkit::edit_rules {

// Where an index of an array of n elements lands: 0..n-1, or n (one past
// the end) when past_end is allowed (setting there appends); nullopt when
// out of range.
std::optional<std::size_t> landing(long long index, std::size_t n, bool past_end);

// The exit 3 (or 2) messages, the same whichever engine meets them. `at` is
// the number of segments of p before the value in the way.
[[noreturn]] void cannot_set_member(const Path& p, std::size_t at, const char* type_in_way);
[[noreturn]] void cannot_index(const Path& p, std::size_t at, const char* type_in_way);
[[noreturn]] void index_out_of_range(const Path& p, long long index, std::size_t n);
[[noreturn]] void all_names_many(const Path& p);  // `[]` on a path that is written
[[noreturn]] void cannot_delete_through(const Path& p, const char* type_in_way);
[[noreturn]] void cannot_delete_in(const Path& p, const char* type_in_way);          // the last segment's container
[[noreturn]] void cannot_change(const Path& p, const char* verb, const char* type);  // add to, append to, merge into
// -=, *=, /=, %= ('-', '*', '/', '%') on what is not a number: null too, as
// jq's null - 1 is an error (+= alone counts null as 0, as jq's null + 1)
[[noreturn]] void cannot_compute(const Path& p, char op, const char* type);

// PATH+=NUMBER on the value found (null counts as 0): a + b. Integers are
// exact (to 37 digits each, in 128 bits); decimals add on their digits, as
// a person adds them (0.1 + 0.2 is 0.3), when the exact sum has at most 34
// significant digits; past that, the nearest doubles are added. A sum no
// double can hold is exit 3.
json::value number_sum(const json::value& a, const json::value& b, const Path& where);

// PATH-=N, PATH*=N, PATH/=N and PATH%=N (op '-', '*', '/', '%') on the
// number found, as jq's - * / % mean them. - is + of -N. * and / are exact
// on the decimals as written (0.1 * 3 is 0.3) when the exact result has at
// most max_digits significant digits; a product past that is the doubles',
// a quotient that does not terminate is rounded to max_digits digits (half
// to even). % is jq's: both truncated to integers, the remainder with the
// dividend's sign (exact at any size). Dividing by zero (for %: by a
// divisor whose integer part is 0), or a result no double can hold: exit 3.
json::value number_op(char op, const json::value& a, const json::value& b, const Path& where);

// The exact decimal sum of two JSON number texts, written as JSON
// ("0.3", "1.5e+40"), or nullopt when it needs more than max_digits
// significant digits.
inline constexpr std::size_t max_digits = 34;
std::optional<std::string> decimal_sum(std::string_view a, std::string_view b);
// the exact product, or nullopt past max_digits significant digits
std::optional<std::string> decimal_product(std::string_view a, std::string_view b);
// the quotient, exact or rounded to max_digits digits; nullopt when b is 0
std::optional<std::string> decimal_quotient(std::string_view a, std::string_view b);
// jq's a % b on the integer parts; nullopt when b's integer part is 0
std::optional<std::string> integer_remainder(std::string_view a, std::string_view b);

}  // namespace loopkit::edit_rules
