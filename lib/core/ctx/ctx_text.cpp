// A save's text: the 2-space layout json::to_text writes with
// json::default_layout(), byte for byte, written straight into one string
// (a save is mostly short strings, and quoting each through a returned
// string was a third of a save's cost).
#include <algorithm>

#include "core/ctx/ctx.hpp"

namespace loopkit::ctx {

namespace {

// s as a JSON string literal: as it is between quotes when nothing in it
// needs an escape (nearly always), else as json::quote writes it
void append_quoted(std::string& out, std::string_view s) {
  bool plain = std::none_of(s.begin(), s.end(), [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == '"' || c == '\\' || c == 0x7f;
  });
  if (!plain) {
    out += json::quote(s);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

void append_value(std::string& out, const json::value& v, std::string& indent);

template <class Items, class Item>
void append_items(std::string& out, const Items& items, char open, char close, std::string& indent, Item item) {
  out += open;
  if (items.empty()) {
    out += close;
    return;
  }
  indent += "  ";
  bool first = true;
  for (const auto& e : items) {
    if (!first) out += ',';
    first = false;
    out += '\n';
    out += indent;
    item(e);
  }
  indent.resize(indent.size() - 2);
  out += '\n';
  out += indent;
  out += close;
}

void append_value(std::string& out, const json::value& v, std::string& indent) {
  switch (v.kind()) {
    case boost::json::kind::null: out += "null"; return;
    case boost::json::kind::bool_: out += v.get_bool() ? "true" : "false"; return;
    case boost::json::kind::string:
      if (json::is_number_literal(v)) out += json::literal_text(v);
      else append_quoted(out, std::string_view(v.get_string().data(), v.get_string().size()));
      return;
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: out += json::number_text(v); return;
    case boost::json::kind::array:
      append_items(out, v.get_array(), '[', ']', indent, [&](const json::value& e) { append_value(out, e, indent); });
      return;
    case boost::json::kind::object:
      append_items(out, v.get_object(), '{', '}', indent, [&](const boost::json::key_value_pair& kv) {
        append_quoted(out, std::string_view(kv.key().data(), kv.key().size()));
        out += ": ";
        append_value(out, kv.value(), indent);
      });
      return;
  }
}

}  // namespace

std::string save_text(const json::value& doc) {
  std::string out, indent;
  out.reserve(4096);
  append_value(out, doc, indent);
  out += '\n';
  return out;
}

}  // namespace loopkit::ctx
