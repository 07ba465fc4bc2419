#include "core/jsontext.hpp"

#include <cmath>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <boost/json/basic_parser_impl.hpp>

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
  // what json::parse refuses, so is the file: a number out of range (but
  // 0e400 is 0); the full parse then words the error
  bool on_double(double d, std::string_view s, ec_t& ec) {
    if (std::isfinite(d)) return true;
    for (char c : s) {
      if (c == 'e' || c == 'E') return true;
      if (c >= '1' && c <= '9') break;
    }
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

std::size_t JsonText::ws(std::size_t p) const {
  while (p < t_.size() && is_ws(t_[p])) ++p;
  return p;
}

namespace {
// What a scanner of valid JSON must stop at between values: '"' and the
// brackets. Everything else is skipped a byte at a time without a call or a
// chain of compares.
struct Classes {
  unsigned char in_container[256] = {};
  constexpr Classes() {
    in_container[static_cast<unsigned char>('"')] = 1;
    in_container[static_cast<unsigned char>('{')] = 2;
    in_container[static_cast<unsigned char>('[')] = 2;
    in_container[static_cast<unsigned char>('}')] = 3;
    in_container[static_cast<unsigned char>(']')] = 3;
  }
};
constexpr Classes classes;
}  // namespace

std::size_t JsonText::skip_string(std::size_t p) const {
  // Strings are most of a state file's bytes and most are short: look at 16
  // bytes at a time for a quote or a backslash (SSE2, on every x86-64).
  const char* d = t_.data();
  const std::size_t n = t_.size();
  ++p;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  while (p + 16 <= n) {
    __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
    int hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
    if (!hits) {
      p += 16;
      continue;
    }
    p += static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(hits)));
    if (d[p] == '"') return p + 1;
    p += 2;  // an escape and the character it escapes
  }
#endif
  for (;;) {  // the last bytes of the text, one at a time
    if (d[p] == '"') return p + 1;
    p += d[p] == '\\' ? 2 : 1;
  }
}

std::size_t JsonText::skip_value(std::size_t p) const {
  const auto* d = reinterpret_cast<const unsigned char*>(t_.data());
  char c = t_[p];
  if (c == '"') return skip_string(p);
  if (c == '{' || c == '[') {
    int depth = 0;
    for (;;) {
      while (!classes.in_container[d[p]]) ++p;
      switch (classes.in_container[d[p]]) {
        case 1: p = skip_string(p); continue;
        case 2: ++depth; break;
        default:
          if (--depth == 0) return p + 1;
      }
      ++p;
    }
  }
  while (p < t_.size() && !is_ws(t_[p]) && t_[p] != ',' && t_[p] != '}' && t_[p] != ']') ++p;
  return p;
}

const std::vector<JsonText::Item>& JsonText::items(std::size_t b) const {
  auto [slot, fresh] = walks_.try_emplace(b);
  if (fresh) walk(b, slot->second, true);
  return slot->second.items;
}

void JsonText::walk(std::size_t b, Walk& w, bool children) const {
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
    char c = t_[it.value];
    if (children && (c == '{' || c == '[')) {
      // a big array inside is walked once, for its end and its items both
      auto [slot, fresh] = walks_.try_emplace(it.value);
      if (fresh) walk(it.value, slot->second, false);
      it.end = slot->second.end;
    } else {
      it.end = skip_value(it.value);
    }
    p = it.end;
    w.items.push_back(it);
  }
  w.end = p + 1;
}

std::string JsonText::key_name(const Item& it) const {
  std::size_t e = skip_string(it.key);
  std::string_view lit = t_.substr(it.key, e - it.key);
  if (lit.find('\\') == std::string_view::npos) return std::string(lit.substr(1, lit.size() - 2));
  return std::string(json::parse(lit, "key").get_string());
}

std::optional<JsonText::Item> JsonText::member(std::size_t b, std::string_view name) const {
  std::optional<Item> found;  // the last of duplicates wins, as in the parsed document
  for (const Item& it : items(b)) {
    std::size_t kend = skip_string(it.key);
    std::string_view lit = t_.substr(it.key + 1, kend - it.key - 2);
    bool same = lit.find('\\') == std::string_view::npos ? lit == name : key_name(it) == name;
    if (same) found = it;
  }
  return found;
}

}  // namespace loopkit
