// nearest_double (core/json/json.hpp): a JSON number's text as the nearest double.
#include <limits>
#include <optional>

#include "core/json/json.hpp"
#include "sys/base/decimal.hpp"

namespace loopkit::json {

// sys/base/decimal, not strtod (37 KB of every tool with its strncasecmp) nor
// std::from_chars (90 KB): both round as strtod does.
double nearest_double(std::string_view t) {
  return read_nearest_double(t).value_or(std::numeric_limits<double>::quiet_NaN());
}

}  // namespace loopkit::json
