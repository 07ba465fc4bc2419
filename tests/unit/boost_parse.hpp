// The reference for json::parse: Boost.JSON's own parser (basic_parser),
// which the tools read JSON with until issue 24 and whose judgement and
// wording the tools keep. json::parse now builds its values from
// json_members' validating reader; the tests hold both readers to this one.
#pragma once
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value_stack.hpp>
#include <cmath>
#include <cctype>
#include <string>
#include <vector>

#include "core/json/json.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::reference {

namespace boost_detail {

using ec_t = boost::system::error_code;

// Boost.JSON's value builder; numbers are checked (finite) as json::parse
// checks them. Number literals are not kept: compare with Literals::none.
struct Builder {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();

  boost::json::value_stack st;
  std::string number;  // the parts of a number split across writes
  bool out_of_range = false;

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_object_begin(ec_t&) { return true; }
  bool on_object_end(std::size_t n, ec_t&) { return st.push_object(n), true; }
  bool on_array_begin(ec_t&) { return true; }
  bool on_array_end(std::size_t n, ec_t&) { return st.push_array(n), true; }
  bool on_key_part(std::string_view s, std::size_t, ec_t&) { return st.push_chars(s), true; }
  bool on_key(std::string_view s, std::size_t, ec_t&) { return st.push_key(s), true; }
  bool on_string_part(std::string_view s, std::size_t, ec_t&) { return st.push_chars(s), true; }
  bool on_string(std::string_view s, std::size_t, ec_t&) { return st.push_string(s), true; }
  bool on_number_part(std::string_view s, ec_t&) { return number.append(s), true; }
  bool on_int64(std::int64_t i, std::string_view, ec_t&) { return st.push_int64(i), number.clear(), true; }
  bool on_uint64(std::uint64_t u, std::string_view, ec_t&) { return st.push_uint64(u), number.clear(), true; }
  bool on_double(double, std::string_view s, ec_t& ec) {
    number.append(s);
    const double d = json::nearest_double(number);
    number.clear();
    if (!std::isfinite(d)) {
      out_of_range = true;
      ec = boost::json::error::exponent_overflow;
      return false;
    }
    return st.push_double(d), true;
  }
  bool on_bool(bool b, ec_t&) { return st.push_bool(b), true; }
  bool on_null(ec_t&) { return st.push_null(), true; }
  bool on_comment_part(std::string_view, ec_t&) { return true; }
  bool on_comment(std::string_view, ec_t&) { return true; }
};

using Parser = boost::json::basic_parser<Builder>;

[[noreturn]] inline void fail_at(std::string_view text, std::size_t at, std::string reason, std::string_view subject) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  if (!reason.empty() && reason.back() == '.') reason.pop_back();
  for (auto& c : reason) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  fail_data(loopkit::format("{}: not valid JSON: {} at line {}, column {}", quoted(subject), reason, line, col));
}

inline void check(Parser& p, std::string_view text, std::size_t at, const ec_t& ec, std::string_view subject) {
  if (!ec) return;
  fail_at(text, at, p.handler().out_of_range ? "number out of range" : ec.message(), subject);
}

inline boost::json::parse_options strict_options() {
  boost::json::parse_options o;
  o.max_depth = json::max_depth;
  return o;
}

inline bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace boost_detail

// What json::parse did with Boost's parser: one document, or exit 3 worded
// "'SUBJECT': not valid JSON: REASON at line L, column C".
inline json::value boost_parse(std::string_view text, std::string_view subject) {
  using namespace boost_detail;
  std::size_t begin = 0;
  while (begin < text.size() && is_ws(text[begin])) ++begin;
  if (begin == text.size()) fail_data(loopkit::format("{}: not valid JSON: empty document", quoted(subject)));
  Parser p(strict_options());
  ec_t ec;
  std::size_t used = p.write_some(false, text.data(), text.size(), ec);
  check(p, text, used, ec, subject);
  if (!p.done()) check(p, text, used, boost::json::error::incomplete, subject);
  for (std::size_t i = used; i < text.size(); ++i)
    if (!is_ws(text[i])) check(p, text, i, boost::json::error::extra_data, subject);
  return p.handler().st.release();
}

// What json::parse_many did with Boost's parser.
inline std::vector<json::value> boost_parse_many(std::string_view text, std::string_view subject) {
  using namespace boost_detail;
  std::vector<json::value> docs;
  Parser p(strict_options());
  std::size_t pos = 0;
  for (;;) {
    while (pos < text.size() && is_ws(text[pos])) ++pos;
    if (pos == text.size()) break;
    p.reset();
    p.handler().st.reset();
    ec_t ec;
    std::size_t used = p.write_some(true, text.data() + pos, text.size() - pos, ec);
    check(p, text, pos + used, ec, subject);
    pos += used;
    if (!p.done()) {
      p.write_some(false, nullptr, 0, ec);
      check(p, text, pos, ec, subject);
    }
    docs.push_back(p.handler().st.release());
  }
  return docs;
}

// Equal as parsed values, kinds included (1 and 1.0 differ, int64 and
// uint64 differ), members in the same order: what a rewrite of the parser
// must keep.
inline bool same_value(const json::value& a, const json::value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case boost::json::kind::double_: {
      const double x = a.get_double(), y = b.get_double();
      return x == y && std::signbit(x) == std::signbit(y);
    }
    case boost::json::kind::array: {
      const auto &x = a.get_array(), &y = b.get_array();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!same_value(x[i], y[i])) return false;
      return true;
    }
    case boost::json::kind::object: {
      const auto &x = a.get_object(), &y = b.get_object();
      if (x.size() != y.size()) return false;
      for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j)
        if (i->key() != j->key() || !same_value(i->value(), j->value())) return false;
      return true;
    }
    default: return a == b;
  }
}

}  // namespace loopkit::reference
