// The one JSON reader of the tools (json_members.hpp): a validating
// recursive descent over the bytes that stops where Boost.JSON's parser
// stopped and names what it named (syntax error, incomplete JSON, extra
// data, the escapes' errors, too deep, a number out of range), so that
// every text is judged and its problem worded as before; Boost's parser
// (40 KB of a tool) is linked by no tool. Lock records read their members
// with it, event lines their spans (read_json_members: no copies), and
// json::parse builds its values from its events (read_json_events).
#include <array>
#include <climits>
#include <cmath>
#include <cstring>

#include "core/json/json_members.hpp"
#include "sys/base/scan_block.hpp"
#include "sys/base/decimal.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit {

namespace {

constexpr std::size_t max_depth = 1000;  // json::max_depth

bool is_ws(unsigned char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
int hex_digit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The length of the UTF-8 sequence a byte leads (0: it leads none) and
// whether the sequence at p is valid, as Boost.JSON classifies them.
int utf8_length(unsigned char c) {
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) return 3;
  if (c >= 0xF0 && c <= 0xF4) return 4;
  return 0;
}
bool is_valid_utf8(const unsigned char* p, int len) {
  auto cont = [](unsigned char c) { return (c & 0xC0) == 0x80; };
  const unsigned char c = p[0], d = p[1];
  if (len == 2) return cont(d);
  if (len == 3) {
    const bool second = c == 0xE0 ? (d >= 0xA0 && d <= 0xBF) : c == 0xED ? (d >= 0x80 && d <= 0x9F) : cont(d);
    return second && cont(p[2]);
  }
  const bool second = c == 0xF0 ? (d >= 0x90 && d <= 0xBF) : c == 0xF4 ? (d >= 0x80 && d <= 0x8F) : cont(d);
  return second && cont(p[2]) && cont(p[3]);
}

class Reader {
public:
  Reader(std::string_view text, std::string_view subject)
      : t_(text), d_(reinterpret_cast<const unsigned char*>(text.data())), n_(text.size()), subject_(subject) {}

  std::optional<JsonMembers> document();
  bool spans(std::vector<JsonMemberSpan>& out);
  void events(JsonEvents& events, bool many);

private:
  std::string_view t_;
  const unsigned char* d_;
  std::size_t n_;
  std::string_view subject_;
  std::vector<JsonMemberSpan>* spans_ = nullptr;  // the top level's members as spans, when asked
  JsonEvents* events_ = nullptr;                  // every value, when asked
  std::size_t depth_ = max_depth;
  bool escaped_ = false;  // whether the last string read held an escape
  uint64_t names_ = 0;    // a bit for each length and first byte of the names read: most are new

  [[noreturn, gnu::cold]] void fail(std::size_t at, std::string_view reason) const {
    fail_invalid_json(t_, at, reason, subject_);
  }
  [[noreturn, gnu::cold]] void syntax(std::size_t at) const { fail(at, "syntax error"); }
  [[noreturn, gnu::cold]] void incomplete() const { fail(n_, "incomplete json"); }

  // The first value's place: after the whitespace, where the text holds a
  // document (or none, when none may be)
  std::size_t first(bool may_be_empty) const {
    const std::size_t p = ws(0);
    if (p == n_ && !may_be_empty) fail_data(loopkit::format("{}: not valid JSON: empty document", quoted(subject_)));
    return p;
  }
  std::size_t ws(std::size_t p) const {
    while (p < n_ && is_ws(d_[p])) {
      // a pretty-printed text's runs of ' ' and '\n', 16 bytes at a time
      const std::size_t blanks = p + 16 <= n_ ? scan::detail::blank16(d_ + p) : 0;
      p += blanks ? blanks : 1;
    }
    return p;
  }
  // ws, where the text may not end
  std::size_t token(std::size_t p) const {
    p = ws(p);
    if (p == n_) incomplete();
    return p;
  }

  std::size_t value(std::size_t p);
  std::size_t literal(std::size_t p, std::string_view word) const;
  std::size_t number(std::size_t p, JsonNumber* n) const;
  std::size_t scalar(std::size_t p);
  std::size_t digits(std::size_t p) const {
    if (p == n_) incomplete();
    if (!is_digit(d_[p])) syntax(p);
    while (p < n_ && is_digit(d_[p])) ++p;
    return p;
  }
  std::size_t string(std::size_t p);  // sets escaped_
  std::size_t plain_run(std::size_t p) const;
  std::size_t escape(std::size_t p) const;
  std::size_t unicode_fast(std::size_t p) const;
  std::size_t unicode_slow(std::size_t p) const;
  std::size_t hex4(std::size_t p, unsigned& u) const;
  std::size_t container(std::size_t p, JsonMembers* members);
  std::size_t member(std::size_t p, JsonMembers* members);
  void enter(std::size_t p) {
    if (depth_ == 0) fail(p, "too deep");
    --depth_;
  }
};

std::size_t Reader::value(std::size_t p) {
  if (p == n_) incomplete();
  if (events_ && d_[p] != '[' && d_[p] != '{') return scalar(p);
  switch (d_[p]) {
    case '-':
    case '0' ... '9': return number(p, nullptr);
    case 't': return literal(p, "true");
    case 'f': return literal(p, "false");
    case 'n': return literal(p, "null");
    case '"': return string(p);
    case '[':
    case '{': return container(p, nullptr);
    default: syntax(p);
  }
}

// A scalar at p (or what is none: a syntax error), read and told to events_.
std::size_t Reader::scalar(std::size_t p) {
  switch (d_[p]) {
    case 't': p = literal(p, "true"), events_->boolean(true); return p;
    case 'f': p = literal(p, "false"), events_->boolean(false); return p;
    case 'n': p = literal(p, "null"), events_->null(); return p;
    case '"': {
      const std::size_t end = string(p);
      events_->string(t_.substr(p, end - p), escaped_);
      return end;
    }
    case '-':
    case '0' ... '9': {
      JsonNumber n{};
      const std::size_t end = number(p, &n);
      n.text = t_.substr(p, end - p);
      events_->number(n);
      return end;
    }
    default: syntax(p);
  }
}

// Boost compares a whole word when the text holds as many bytes (an error
// at its start), else byte by byte.
std::size_t Reader::literal(std::size_t p, std::string_view word) const {
  if (n_ - p >= word.size()) {
    if (std::memcmp(d_ + p, word.data(), word.size()) != 0) syntax(p);
    return p + word.size();
  }
  for (std::size_t i = 1; i < word.size(); ++i) {
    if (p + i == n_) incomplete();
    if (d_[p + i] != static_cast<unsigned char>(word[i])) syntax(p + i);
  }
  return p + word.size();
}

// A number is the longest run the grammar takes; what follows is the
// container's business. Boost's checks and their places: a fraction cut at
// the end of the text is a syntax error, or incomplete after an integer part
// too long for 64 bits (it reads those digits another way); an exponent past
// INT_MAX overflows at the digit that passes it, or at the end with the
// digits it shifts by (its bias); a number that no double holds is out of
// range where it ends (json::parse's handler refuses it there).
std::size_t Reader::number(std::size_t p, JsonNumber* n) const {
  const std::size_t begin = p;
  const bool negative = d_[p] == '-';
  if (negative) ++p;
  if (p == n_) incomplete();
  const std::size_t int_begin = p;
  if (d_[p] == '0') ++p;
  else p = digits(p);
  // the mantissa as Boost accumulates it, and the digits it leaves out
  const uint64_t limit = negative ? 922337203685477580ULL : 1844674407370955161ULL;
  const unsigned last = negative ? 8 : 5;
  uint64_t mant = 0;
  long long bias = 0;
  bool overflowed = false;
  for (std::size_t i = int_begin; i < p; ++i) {
    const unsigned c = d_[i] - '0';
    if (overflowed || mant > limit || (mant == limit && c > last)) overflowed = true, ++bias;
    else mant = 10 * mant + c;
  }
  bool integer = true;
  if (p < n_ && d_[p] == '.') {
    integer = false;
    if (++p == n_) overflowed ? incomplete() : syntax(p);
    const std::size_t frac = p;
    p = digits(p);
    for (std::size_t i = frac; i < p && !overflowed && mant <= 9007199254740991ULL; ++i)
      mant = 10 * mant + (d_[i] - '0'), --bias;
  }
  if (p < n_ && (d_[p] | 0x20) == 'e') {
    integer = false;
    if (++p == n_) incomplete();
    const bool minus = d_[p] == '-';
    if (d_[p] == '+' || minus) ++p;
    if (p == n_) syntax(p);
    if (!is_digit(d_[p])) syntax(p);
    long long exp = 0;
    for (; p < n_ && is_digit(d_[p]); ++p) {
      if (exp > 214748364 || (exp == 214748364 && d_[p] > '7')) fail(p, "exponent overflow");
      exp = 10 * exp + (d_[p] - '0');
    }
    if (minus ? bias < INT_MIN + exp : bias > INT_MAX - exp) fail(p, "exponent overflow");
  }
  if (integer && !overflowed) {  // Boost's int64 and uint64 need no check
    if (n && (negative || mant <= uint64_t(INT64_MAX)))
      n->kind = JsonNumber::int64, n->i = negative ? static_cast<int64_t>(0 - mant) : static_cast<int64_t>(mant);
    else if (n) n->kind = JsonNumber::uint64, n->u = mant;
    return p;
  }
  if (n) n->kind = JsonNumber::other;
  if (!is_finite_json_number(t_.substr(begin, p - begin))) fail(p, "number out of range");
  return p;
}

// the bytes a plain run of a string holds: printable ASCII but '"' and '\\'
constexpr auto plain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
  return t;
}();

// Where the plain run at p ends: 16 bytes at a time by the scan's own test
// (scan_block.hpp: the same stops), byte by byte near the text's end.
std::size_t Reader::plain_run(std::size_t p) const {
  for (; p + 16 <= n_; p += 16)
    if (const unsigned stops = scan::detail::string_stops16(d_ + p)) return p + scan::detail::first_bit(stops);
  while (p < n_ && plain[d_[p]]) ++p;
  return p;
}

std::size_t Reader::string(std::size_t p) {
  escaped_ = false;
  for (++p;;) {
    p = plain_run(p);
    if (p == n_) incomplete();
    const unsigned char c = d_[p];
    if (c == '"') return p + 1;
    if (c == '\\') {
      escaped_ = true;
      p = escape(p + 1);
      continue;
    }
    if (c < 0x20) syntax(p);
    const int len = utf8_length(c);
    if (len == 0) syntax(p);
    if (n_ - p < static_cast<std::size_t>(len)) incomplete();
    if (!is_valid_utf8(d_ + p, len)) syntax(p);
    p += static_cast<std::size_t>(len);
  }
}

std::size_t Reader::escape(std::size_t p) const {
  if (p == n_) incomplete();
  if (is_short_escape(d_[p])) return p + 1;
  if (d_[p] == 'u') return n_ - p > 10 ? unicode_fast(p) : unicode_slow(p);
  syntax(p);
}

// Boost's fast path, taken when 11 bytes remain from the 'u': four digits
// read at once, an error placed after those of the first three that are
// digits; a low surrogate first is a "leading" error, a bad second half a
// "trailing" one.
std::size_t Reader::unicode_fast(std::size_t p) const {
  // the digits at `at`; an error placed from `base`
  auto four = [&](std::size_t at, std::size_t base, unsigned& u) {
    int d[4];
    for (int i = 0; i < 4; ++i) d[i] = hex_digit(d_[at + static_cast<std::size_t>(i)]);
    if ((d[0] | d[1] | d[2] | d[3]) == -1)
      fail(base + (d[0] != -1) + (d[1] != -1) + (d[2] != -1), "expected hex digit");
    u = static_cast<unsigned>((d[0] << 12) + (d[1] << 8) + (d[2] << 4) + d[3]);
  };
  unsigned u1 = 0, u2 = 0;
  four(p + 1, p, u1);
  if (u1 < 0xd800 || u1 > 0xdfff) return p + 5;
  if (u1 > 0xdbff) fail(p, "illegal leading surrogate");
  p += 5;
  if (d_[p] != '\\') syntax(p);
  if (d_[++p] != 'u') syntax(p);
  ++p;
  four(p, p, u2);
  if (u2 < 0xdc00 || u2 > 0xdfff) fail(p, "illegal trailing surrogate");
  return p + 4;
}

std::size_t Reader::hex4(std::size_t p, unsigned& u) const {
  u = 0;
  for (int i = 0; i < 4; ++i, ++p) {
    if (p == n_) incomplete();
    const int d = hex_digit(d_[p]);
    if (d == -1) fail(p, "expected hex digit");
    u = u << 4 | static_cast<unsigned>(d);
  }
  return p;
}

// Boost's byte-by-byte path near the end of the text: the same checks,
// other errors (a low surrogate first is "trailing", a bad second half a
// hex digit), placed after the digits.
std::size_t Reader::unicode_slow(std::size_t p) const {
  unsigned u1 = 0, u2 = 0;
  p = hex4(p + 1, u1);
  if (u1 < 0xd800 || u1 > 0xdfff) return p;
  if (u1 > 0xdbff) fail(p, "illegal trailing surrogate");
  if (p == n_) incomplete();
  if (d_[p] != '\\') syntax(p);
  if (++p == n_) incomplete();
  if (d_[p] != 'u') syntax(p);
  p = hex4(p + 1, u2);
  if (u2 < 0xdc00 || u2 > 0xdfff) fail(p, "expected hex digit");
  return p;
}

// The value's text with the whitespace outside its strings dropped: a
// record stays one line whatever layout another tool wrote it in.
std::string compact_text(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool in_string = false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (in_string) {
      out += c;
      if (c == '\\') out += v[++i];
      else if (c == '"') in_string = false;
    } else if (!is_ws(static_cast<unsigned char>(c))) {
      out += c;
      in_string = c == '"';
    }
  }
  return out;
}

std::size_t Reader::member(std::size_t p, JsonMembers* members) {
  const std::size_t key = p, key_end = string(p);
  const bool escaped = escaped_;
  p = token(key_end);
  if (d_[p] != ':') syntax(p);
  p = token(p + 1);
  if (events_) events_->key(t_.substr(key, key_end - key), escaped);
  const std::size_t begin = p;
  p = value(p);
  if (spans_ && depth_ == max_depth - 1)
    spans_->push_back({t_.substr(key, key_end - key), t_.substr(begin, p - begin), escaped});
  if (members) {
    const std::string_view v = t_.substr(begin, p - begin);
    std::string name = escaped ? *json_string_value(t_.substr(key, key_end - key))
                               : std::string(t_.substr(key + 1, key_end - key - 2));
    std::string text = d_[begin] == '{' || d_[begin] == '[' ? compact_text(v) : std::string(v);
    const uint64_t bit = uint64_t(1) << ((name.size() * 7 + (name.empty() ? 0 : name[0])) & 63);
    if (names_ & bit) members->add(std::move(name), std::move(text));
    else members->members.push_back({std::move(name), std::move(text)});
    names_ |= bit;
  }
  return p;
}

// An object or an array at p; an object's members go to members when given.
std::size_t Reader::container(std::size_t p, JsonMembers* members) {
  enter(p);
  const bool object = d_[p] == '{';
  const unsigned char close = object ? '}' : ']';
  p = token(p + 1);
  std::size_t size = 0;
  if (d_[p] != close) {
    for (;; ++size) {
      if (object && d_[p] != '"') syntax(p);
      p = token(object ? member(p, members) : value(p));
      if (d_[p] == close) break;
      if (d_[p] != ',') syntax(p);
      p = token(p + 1);
    }
    ++size;
  }
  ++depth_;
  if (events_) object ? events_->object_end(size) : events_->array_end(size);
  return p + 1;
}

std::optional<JsonMembers> Reader::document() {
  std::size_t p = first(false);
  JsonMembers fields;
  fields.members.reserve(12);  // a record of ours has 8 or 10
  const bool object = d_[p] == '{';
  p = object ? container(p, &fields) : value(p);
  p = ws(p);
  if (p != n_) fail(p, "extra data");
  if (!object) return std::nullopt;
  return fields;
}

bool Reader::spans(std::vector<JsonMemberSpan>& out) {
  spans_ = &out;
  std::size_t p = first(false);
  const bool object = d_[p] == '{';
  p = ws(value(p));
  if (p != n_) fail(p, "extra data");
  return object;
}

void Reader::events(JsonEvents& events, bool many) {
  events_ = &events;
  std::size_t p = first(many);
  while (p != n_) {
    p = ws(value(p));
    events.document_end();
    if (p != n_ && !many) fail(p, "extra data");
  }
}

}  // namespace

std::optional<JsonMembers> parse_json_object(std::string_view text, std::string_view subject) {
  return Reader(text, subject).document();
}

void fail_invalid_json(std::string_view text, std::size_t at, std::string_view reason, std::string_view subject) {
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  fail_data(loopkit::format("{}: not valid JSON: {} at line {}, column {}", quoted(subject), reason, line, col));
}

void read_json_events(std::string_view text, std::string_view subject, JsonEvents& events, bool many) {
  Reader(text, subject).events(events, many);
}

bool read_json_members(std::string_view text, std::string_view subject, std::vector<JsonMemberSpan>& out) {
  out.clear();
  return Reader(text, subject).spans(out);
}

}  // namespace loopkit
