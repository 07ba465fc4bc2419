#include "core/json/json.hpp"

#include <boost/json/src.hpp>  // Boost.JSON compiled into the library, once
#include <cmath>
#include <cstdint>

#include "core/json/json_members.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"
#include "sys/base/random.hpp"

namespace loopkit::json {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A number's literal is all digits (and a sign): no fraction, no exponent.
bool is_integer_literal(std::string_view t) { return t.find_first_of(".eE") == std::string_view::npos; }

// The values of json_members' validating reader, built on Boost.JSON's
// value stack (its rules for a name given twice: first place, last value);
// numbers are kept as their literal text where asked. Boost's own parser,
// 40 KB of a tool, is not linked (issue 24).
class Builder final : public JsonEvents {
public:
  Builder(boost::json::storage_ptr storage, Literals keep) : storage_(std::move(storage)), keep_(keep) {
    st_.reset(storage_);
  }
  std::vector<value> docs;

  void string(std::string_view lit, bool escaped) override { st_.push_string(text_of(lit, escaped)); }
  void key(std::string_view lit, bool escaped) override { st_.push_key(text_of(lit, escaped)); }
  void number(const JsonNumber& n) override {
    if (n.kind == JsonNumber::int64) {
      // only "-0" spells an integer otherwise than its shortest text
      if (keep_ == Literals::as_written && n.i == 0 && n.text == "-0") push_literal(n.text);
      else st_.push_int64(n.i);
    } else if (n.kind == JsonNumber::uint64) {
      st_.push_uint64(n.u);
    } else {
      // not Boost's double: on 129223372036854775807345678901234.5 it is
      // one unit in the last place off (...475e32, not ...477e32)
      const double d = nearest_double(n.text);
      const bool keep_text = keep_ == Literals::as_written     ? loopkit::format("{}", d) != n.text
                             : keep_ == Literals::big_integers ? is_integer_literal(n.text)
                                                               : false;
      if (keep_text) push_literal(n.text);
      else st_.push_double(d);
    }
  }
  void boolean(bool b) override { st_.push_bool(b); }
  void null() override { st_.push_null(); }
  void object_end(std::size_t members) override { st_.push_object(members); }
  void array_end(std::size_t elements) override { st_.push_array(elements); }
  void document_end() override {
    docs.push_back(st_.release());
    st_.reset(storage_);
  }

  static const std::string& literal_prefix();

private:
  boost::json::value_stack st_;
  boost::json::storage_ptr storage_;
  Literals keep_;
  std::string decoded_;

  // a string literal's text: its bytes, or decoded when it holds an escape
  std::string_view text_of(std::string_view lit, bool escaped) {
    if (!escaped) return lit.substr(1, lit.size() - 2);
    decoded_ = *json_string_value(lit);
    return decoded_;
  }

  void push_literal(std::string_view text) {
    std::string marked = literal_prefix();
    marked += text;
    st_.push_string(marked);
  }
};

const std::string& Builder::literal_prefix() {
  static const std::string prefix = [] {
    // 0xFF never occurs in UTF-8, and every string a value can hold has
    // been checked to be UTF-8: no data can spell this prefix, whatever it
    // guesses of the random tag (the fuzzer learnt a NUL-led one)
    return loopkit::format("\xfflk{:016x}#", random_u64());
  }();
  return prefix;
}

}  // namespace

value parse(std::string_view text, std::string_view subject, boost::json::storage_ptr storage, Literals keep) {
  Builder b(std::move(storage), keep);
  read_json_events(text, subject, b, false);
  return std::move(b.docs.front());
}

std::vector<value> parse_many(std::string_view text, std::string_view subject, boost::json::storage_ptr storage,
                              Literals keep) {
  Builder b(std::move(storage), keep);
  read_json_events(text, subject, b, true);
  return std::move(b.docs);
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
