// nearest_double (core/json.hpp): a JSON number's text as the nearest double.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "sys/decimal.hpp"

namespace loopkit::json {

// Clinger's fast path first (sys/decimal): most numbers take it; the others
// go to strtod (std::from_chars, its only user, was 90 KB of every tool).
double nearest_double(std::string_view t) {
  if (std::optional<Decimal> d = read_decimal(t))
    if (std::optional<double> v = d->exact()) return *v;
  return std::strtod(std::string(t).c_str(), nullptr);  // ±inf past the range, with the sign
}

}  // namespace loopkit::json
