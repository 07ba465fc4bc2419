#include "core/jsontext.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <cmath>

#include "core/json.hpp"
#include "sys/decimal.hpp"

namespace loopkit {

namespace {

// A handler that accepts everything: the parser alone checks the grammar,
// the UTF-8 and the depth, and nothing is allocated.
struct NullHandler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);
  using ec_t = boost::system::error_code;
  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_object_begin(ec_t&) { return true; }
  bool on_object_end(std::size_t, ec_t&) { return true; }
  bool on_array_begin(ec_t&) { return true; }
  bool on_array_end(std::size_t, ec_t&) { return true; }
  bool on_key_part(std::string_view, std::size_t, ec_t&) { return true; }
  bool on_key(std::string_view, std::size_t, ec_t&) { return true; }
  bool on_string_part(std::string_view, std::size_t, ec_t&) { return true; }
  bool on_string(std::string_view, std::size_t, ec_t&) { return true; }
  bool on_number_part(std::string_view, ec_t&) { return true; }
  bool on_int64(std::int64_t, std::string_view, ec_t&) { return true; }
  bool on_uint64(std::uint64_t, std::string_view, ec_t&) { return true; }
  // what json::parse refuses, so is the file: a number out of range (but
  // 0e400 is 0), judged as json::parse judges it; the full parse then
  // words the error
  bool on_double(double, std::string_view s, ec_t& ec) {
    if (is_finite_json_number(s)) return true;
    ec = boost::json::error::exponent_overflow;
    return false;
  }
  bool on_bool(bool, ec_t&) { return true; }
  bool on_null(ec_t&) { return true; }
  bool on_comment_part(std::string_view, ec_t&) { return true; }
  bool on_comment(std::string_view, ec_t&) { return true; }
};

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

void validate_json(std::string_view text, std::string_view subject) {
  boost::json::parse_options opt;
  opt.max_depth = json::max_depth;
  boost::json::basic_parser<NullHandler> p(opt);
  boost::system::error_code ec;
  std::size_t used = p.write_some(false, text.data(), text.size(), ec);
  bool trailing = false;
  if (!ec) {
    for (std::size_t i = used; i < text.size(); ++i) trailing |= !is_ws(text[i]);
  }
  if (ec || trailing || !p.done()) json::parse(text, subject);  // the same message as a full parse gives
}

}  // namespace loopkit
