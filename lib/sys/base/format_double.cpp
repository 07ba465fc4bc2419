// The shortest decimal that reads back as the same double: Dragonbox, from
// fmt's sources (Debian's libfmt-dev), laid out as fmt's "{}" lays it out,
// so that JSON numbers keep the text they had before. Only this function of
// fmt is linked, and only into tools that format a double.
#include <fmt/format-inl.h>

#include <cmath>

#include "sys/base/format.hpp"

FMT_BEGIN_NAMESPACE
namespace detail {
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
// what the rest of format-inl.h names: linked only where sections are not
// collected (the sanitizer builds)
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
}  // namespace detail
FMT_END_NAMESPACE

namespace loopkit::format_detail {
namespace {

void append_exponent(std::string& out, int e) {
  out += e < 0 ? '-' : '+';
  unsigned v = unsigned(e < 0 ? -e : e);
  if (v >= 100) {
    if (v >= 1000) out += char('0' + v / 1000);
    out += char('0' + v / 100 % 10);
  }
  out += char('0' + v / 10 % 10);
  out += char('0' + v % 10);
}

}  // namespace

void append_shortest(std::string& out, double d) {
  if (std::signbit(d)) {
    out += '-';
    d = -d;
  }
  if (!std::isfinite(d)) {
    out += std::isnan(d) ? "nan" : "inf";
    return;
  }
  auto dec = fmt::detail::dragonbox::to_decimal(d);
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = end;
  auto sig = dec.significand;
  do *--p = char('0' + sig % 10);
  while (sig /= 10);
  std::string_view digits(p, std::size_t(end - p));
  int size = int(digits.size());
  int output_exp = dec.exponent + size - 1;
  if (output_exp < -4 || output_exp >= 16) {  // 1.5e+16, 1e-05
    out += digits[0];
    if (size > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += 'e';
    append_exponent(out, output_exp);
  } else if (dec.exponent >= 0) {  // 1234e5 -> 123400000
    out += digits;
    out.append(std::size_t(dec.exponent), '0');
  } else if (int point = dec.exponent + size; point > 0) {  // 1234e-2 -> 12.34
    out += digits.substr(0, std::size_t(point));
    out += '.';
    out += digits.substr(std::size_t(point));
  } else {  // 1234e-6 -> 0.001234
    out += "0.";
    out.append(std::size_t(-point), '0');
    out += digits;
  }
}

}  // namespace loopkit::format_detail
