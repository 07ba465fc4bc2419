#include "core/jsontext.hpp"

#include <boost/json/basic_parser_impl.hpp>
#include <cstring>

#include "core/json.hpp"

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
  bool on_double(double, std::string_view, ec_t&) { return true; }
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

std::size_t JsonText::ws(std::size_t p) const {
  while (p < t_.size() && is_ws(t_[p])) ++p;
  return p;
}

std::size_t JsonText::skip_string(std::size_t p) const {
  ++p;
  for (;;) {
    // strings are most of a state file's bytes: let memchr find the quote
    const void* q = std::memchr(t_.data() + p, '"', t_.size() - p);
    std::size_t at = static_cast<const char*>(q) - t_.data();
    std::size_t bs = 0;
    while (at - bs > p - 1 && t_[at - 1 - bs] == '\\') ++bs;
    if (bs % 2 == 0) return at + 1;
    p = at + 1;
  }
}

std::size_t JsonText::skip_value(std::size_t p) const {
  char c = t_[p];
  if (c == '"') return skip_string(p);
  if (c == '{' || c == '[') {
    int depth = 0;
    for (;;) {
      c = t_[p];
      if (c == '"') {
        p = skip_string(p);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      else if ((c == '}' || c == ']') && --depth == 0) return p + 1;
      ++p;
    }
  }
  while (p < t_.size() && !is_ws(t_[p]) && t_[p] != ',' && t_[p] != '}' && t_[p] != ']') ++p;
  return p;
}

const std::vector<JsonText::Item>& JsonText::items(std::size_t b) const {
  auto [slot, fresh] = items_.try_emplace(b);
  if (!fresh) return slot->second;
  std::vector<Item>& out = slot->second;
  bool members = t_[b] == '{';
  std::size_t p = b + 1;
  for (;;) {
    std::size_t prefix = p;
    p = ws(p);
    if (t_[p] == '}' || t_[p] == ']') break;
    if (t_[p] == ',') p = ws(p + 1);
    Item it{prefix, p, p, p};
    if (members) {
      p = ws(skip_string(p)) + 1;  // past ':'
      it.value = ws(p);
    }
    it.end = skip_value(it.value);
    p = it.end;
    out.push_back(it);
  }
  return out;
}

std::string JsonText::key_name(const Item& it) const {
  std::size_t e = skip_string(it.key);
  std::string_view lit = t_.substr(it.key, e - it.key);
  if (lit.find('\\') == std::string_view::npos) return std::string(lit.substr(1, lit.size() - 2));
  return std::string(json::parse(lit, "key").get_string());
}

std::optional<JsonText::Item> JsonText::member(std::size_t b, std::string_view name) const {
  std::optional<Item> found;  // the last of duplicates wins, as in the parsed document
  std::size_t p = b + 1;
  for (;;) {
    std::size_t prefix = p;
    p = ws(p);
    if (t_[p] == '}') break;
    if (t_[p] == ',') p = ws(p + 1);
    Item it{prefix, p, p, p};
    std::size_t kend = skip_string(p);
    std::string_view lit = t_.substr(p + 1, kend - p - 2);
    p = ws(kend) + 1;
    it.value = ws(p);
    it.end = skip_value(it.value);
    p = it.end;
    bool same = lit.find('\\') == std::string_view::npos ? lit == name : key_name(it) == name;
    if (same) found = it;
  }
  return found;
}

}  // namespace loopkit
