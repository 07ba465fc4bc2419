#include "core/json.hpp"

#include <boost/json/src.hpp>  // Boost.JSON compiled into the library, once
#include <cmath>
#include <cstdint>
#include <random>
#include <boost/json/basic_parser_impl.hpp>

#include "core/json_members.hpp"
#include "sys/error.hpp"
#include "sys/format.hpp"

namespace loopkit::json {

namespace {

boost::json::parse_options strict_options() {
  boost::json::parse_options o;
  o.max_depth = max_depth;
  return o;
}

[[noreturn]] void fail_parse(std::string_view text, std::size_t at, const boost::system::error_code& ec,
                             std::string_view subject) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  std::string reason = ec.message();
  if (!reason.empty() && reason.back() == '.') reason.pop_back();
  for (auto& c : reason) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  fail_data(loopkit::format("{}: not valid JSON: {} at line {}, column {}", quoted(subject), reason, line, col));
}

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

namespace {

// A number's literal is all digits (and a sign): no fraction, no exponent.
bool is_integer_literal(std::string_view t) { return t.find_first_of(".eE") == std::string_view::npos; }

// Boost.JSON's own value builder, but numbers are checked (finite) and,
// where asked, kept as their literal text.
struct Builder {
  static constexpr std::size_t max_object_size = object::max_size();
  static constexpr std::size_t max_array_size = array::max_size();
  static constexpr std::size_t max_key_size = string::max_size();
  static constexpr std::size_t max_string_size = string::max_size();
  using ec_t = boost::system::error_code;

  boost::json::value_stack st;
  Literals keep = Literals::none;
  std::string number;  // the parts of a number split across writes
  bool out_of_range = false;

  bool on_document_begin(ec_t&) { return true; }
  bool on_document_end(ec_t&) { return true; }
  bool on_object_begin(ec_t&) { return true; }
  bool on_object_end(std::size_t n, ec_t&) {
    st.push_object(n);
    return true;
  }
  bool on_array_begin(ec_t&) { return true; }
  bool on_array_end(std::size_t n, ec_t&) {
    st.push_array(n);
    return true;
  }
  bool on_key_part(std::string_view s, std::size_t, ec_t&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(std::string_view s, std::size_t, ec_t&) {
    st.push_key(s);
    return true;
  }
  bool on_string_part(std::string_view s, std::size_t, ec_t&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(std::string_view s, std::size_t, ec_t&) {
    st.push_string(s);
    return true;
  }
  bool on_number_part(std::string_view s, ec_t&) {
    number.append(s);
    return true;
  }
  std::string_view literal(std::string_view last) {
    if (number.empty()) return last;
    number.append(last);
    return number;
  }
  bool on_int64(std::int64_t i, std::string_view s, ec_t&) {
    // only "-0" spells an integer otherwise than its shortest text
    if (keep == Literals::as_written && i == 0 && literal(s) == "-0") push_literal("-0");
    else st.push_int64(i);
    number.clear();
    return true;
  }
  bool on_uint64(std::uint64_t u, std::string_view, ec_t&) {
    st.push_uint64(u);
    number.clear();
    return true;
  }
  bool on_double(double d, std::string_view s, ec_t& ec) {
    std::string_view text = literal(s);
    // not Boost's d: on 129223372036854775807345678901234.5 it is one unit
    // in the last place off (...475e32, not ...477e32), and so are sums
    d = nearest_double(text);
    if (!std::isfinite(d)) {
      out_of_range = true;
      ec = boost::json::error::exponent_overflow;
      return false;
    }
    bool keep_text = keep == Literals::as_written     ? loopkit::format("{}", d) != text
                     : keep == Literals::big_integers ? is_integer_literal(text)
                                                      : false;
    if (keep_text) push_literal(text);
    else st.push_double(d);
    number.clear();
    return true;
  }
  void push_literal(std::string_view text) {
    std::string marked = literal_prefix();
    marked += text;
    st.push_string(marked);
  }
  bool on_bool(bool b, ec_t&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(ec_t&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(std::string_view, ec_t&) { return true; }
  bool on_comment(std::string_view, ec_t&) { return true; }

  static const std::string& literal_prefix();
};

const std::string& Builder::literal_prefix() {
  static const std::string prefix = [] {
    std::random_device rd;
    // 0xFF never occurs in UTF-8, and every string a value can hold has
    // been checked to be UTF-8: no data can spell this prefix, whatever it
    // guesses of the random tag (the fuzzer learnt a NUL-led one)
    return loopkit::format("\xfflk{:08x}{:08x}#", rd(), rd());
  }();
  return prefix;
}

using Parser = boost::json::basic_parser<Builder>;

void check(Parser& p, std::string_view text, std::size_t at, const boost::system::error_code& ec,
           std::string_view subject) {
  if (!ec) return;
  if (p.handler().out_of_range) {
    // the message names the number, not Boost's "exponent overflow"
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at && i < text.size(); ++i) {
      if (text[i] == '\n') ++line, col = 1;
      else ++col;
    }
    fail_data(
        loopkit::format("{}: not valid JSON: number out of range at line {}, column {}", quoted(subject), line, col));
  }
  fail_parse(text, at, ec, subject);
}

}  // namespace

value parse(std::string_view text, std::string_view subject, boost::json::storage_ptr storage, Literals keep) {
  std::size_t begin = 0;
  while (begin < text.size() && is_ws(text[begin])) ++begin;
  if (begin == text.size()) fail_data(loopkit::format("{}: not valid JSON: empty document", quoted(subject)));
  Parser p(strict_options());
  p.handler().keep = keep;
  p.handler().st.reset(storage);
  boost::system::error_code ec;
  std::size_t used = p.write_some(false, text.data(), text.size(), ec);
  check(p, text, used, ec, subject);
  if (!p.done()) fail_parse(text, used, boost::json::error::incomplete, subject);
  for (std::size_t i = used; i < text.size(); ++i)
    if (!is_ws(text[i])) fail_parse(text, i, boost::json::error::extra_data, subject);
  return p.handler().st.release();
}

std::vector<value> parse_many(std::string_view text, std::string_view subject, boost::json::storage_ptr storage,
                              Literals keep) {
  std::vector<value> docs;
  Parser p(strict_options());
  p.handler().keep = keep;
  std::size_t pos = 0;
  for (;;) {
    while (pos < text.size() && is_ws(text[pos])) ++pos;
    if (pos == text.size()) break;
    p.reset();
    p.handler().st.reset(storage);
    boost::system::error_code ec;
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

value number_literal(std::string_view text, boost::json::storage_ptr storage) {
  std::string marked = Builder::literal_prefix();
  marked += text;
  return value(string(marked, std::move(storage)));
}

bool is_number_literal(const value& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_string();
  // the cheap test first: no real string starts with 0xFF
  if (s.empty() || s[0] != '\xff') return false;
  const std::string& p = Builder::literal_prefix();
  return s.size() > p.size() && std::string_view(s).substr(0, p.size()) == p;
}

std::string_view literal_text(const value& v) {
  return std::string_view(v.get_string()).substr(Builder::literal_prefix().size());
}

bool is_numeric(const value& v) { return v.is_number() || is_number_literal(v); }

std::size_t depth(const value& v) {
  // parse bounds every value's nesting by max_depth, so this recursion is bounded too
  std::size_t d = 0;
  if (v.is_array()) {
    for (const auto& e : v.get_array()) d = std::max(d, depth(e));
    return d + 1;
  }
  if (v.is_object()) {
    for (const auto& kv : v.get_object()) d = std::max(d, depth(kv.value()));
    return d + 1;
  }
  return 0;
}

Layout default_layout() { return Layout{}; }

Layout compact_layout() {
  Layout l;
  l.pretty = false;
  l.space_after_colon = false;
  return l;
}

Layout detect_layout(std::string_view t) {
  Layout l;
  l.final_newline = !t.empty() && t.back() == '\n';
  std::size_t i = 0;
  while (i < t.size() && is_ws(t[i])) ++i;
  if (i == t.size() || (t[i] != '{' && t[i] != '[')) return l;
  std::size_t j = i + 1;
  while (j < t.size() && is_ws(t[j])) ++j;
  if (j < t.size() && (t[j] == '}' || t[j] == ']')) return l;  // empty: nothing to learn
  std::string_view gap = t.substr(i + 1, j - i - 1);
  auto nl = gap.rfind('\n');
  if (nl != std::string_view::npos) {
    l.pretty = true;
    l.indent = std::string(gap.substr(nl + 1));
    if (l.indent.empty()) l.indent = "  ";
  } else {
    l.pretty = false;
  }
  // the first member's colon, and the first separating comma at this level
  if (t[i] == '{' && j < t.size() && t[j] == '"') {
    std::size_t k = j + 1;
    while (k < t.size() && t[k] != '"') k += (t[k] == '\\') ? 2 : 1;
    ++k;
    while (k < t.size() && is_ws(t[k])) ++k;
    l.space_after_colon = k + 1 < t.size() && t[k] == ':' && is_ws(t[k + 1]);
  }
  if (!l.pretty) {
    int depth = 0;
    for (std::size_t k = i; k < t.size(); ++k) {
      char c = t[k];
      if (c == '"') {
        ++k;
        while (k < t.size() && t[k] != '"') k += (t[k] == '\\') ? 2 : 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) break;
      } else if (c == ',' && depth == 1) {
        l.space_after_comma = k + 1 < t.size() && t[k + 1] == ' ';
        break;
      }
    }
  }
  return l;
}

// json_members' writer escapes as this always did, a word at a time: the
// one rule for a JSON string's escapes
std::string quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  append_json_string(out, s);
  return out;
}

std::string number_text(const value& v) {
  if (v.is_string()) return std::string(literal_text(v));
  if (v.is_double() && !std::isfinite(v.get_double())) fail_data("cannot write a number that is not finite");
  if (v.is_int64()) return std::to_string(v.get_int64());
  if (v.is_uint64()) return std::to_string(v.get_uint64());
  // shortest text that reads back as the same double: 0.25, 1e+100
  return loopkit::format("{}", v.get_double());
}

void write_value(std::string& out, const value& v, const Layout& layout, const std::string& indent, WriteHook hook,
                 const void* context);

// An array's or object's items between open and close, one per line when
// pretty; each written by item(out, entry, inner indent)
template <class Items, class Item>
void write_items(std::string& out, const Items& items, char open, char close, const Layout& layout,
                 const std::string& indent, Item item) {
  if (items.empty()) {
    out += open;
    out += close;
    return;
  }
  std::string inner = layout.pretty ? indent + layout.indent : indent;
  out += open;
  bool first = true;
  for (const auto& e : items) {
    if (!first) out += (!layout.pretty && layout.space_after_comma) ? ", " : ",";
    first = false;
    if (layout.pretty) {
      out += '\n';
      out += inner;
    }
    item(out, e, inner);
  }
  if (layout.pretty) {
    out += '\n';
    out += indent;
  }
  out += close;
}

void write_value(std::string& out, const value& v, const Layout& layout, const std::string& indent, WriteHook hook,
                 const void* context) {
  if (hook && hook(out, v, context)) return;
  switch (v.kind()) {
    case boost::json::kind::null: out += "null"; return;
    case boost::json::kind::bool_: out += v.get_bool() ? "true" : "false"; return;
    case boost::json::kind::string:
      if (is_number_literal(v)) out += literal_text(v);
      else out += quote(v.get_string());
      return;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: out += number_text(v); return;
    case boost::json::kind::array:
      write_items(out, v.get_array(), '[', ']', layout, indent,
                  [&](std::string& o, const value& e, const std::string& inner) {
                    write_value(o, e, layout, inner, hook, context);
                  });
      return;
    case boost::json::kind::object:
      write_items(out, v.get_object(), '{', '}', layout, indent,
                  [&](std::string& o, const boost::json::key_value_pair& kv, const std::string& inner) {
                    o += quote(kv.key());
                    o += layout.space_after_colon ? ": " : ":";
                    write_value(o, kv.value(), layout, inner, hook, context);
                  });
      return;
  }
}

std::string to_text(const value& v, const Layout& layout) {
  std::string out;
  write_value(out, v, layout, "");
  if (layout.final_newline) out += '\n';
  return out;
}

std::string compact(const value& v) {
  std::string out;
  write_value(out, v, compact_layout(), "");
  return out;
}

std::string raw_text(const value& v) {
  if (v.is_string() && !is_number_literal(v)) return std::string(v.get_string());
  return compact(v);
}

}  // namespace loopkit::json
