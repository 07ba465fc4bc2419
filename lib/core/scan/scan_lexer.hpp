// The lexical half of core/scan/scan.cpp's one pass: whitespace, strings (with
// their escapes and UTF-8), numbers and literals validated as json::parse
// would, and whole values nobody wants skipped without recursion; internal
// to core/scan/scan.cpp, which adds the walk of the wanted containers.
//
// A big state file is read at a few instructions a byte (bench/bigread.sh):
// the usual tokens of a pretty-printed state (a newline and indentation, a
// short name and ": ", a short string or number, a literal) take an inline
// path of one 16-byte step (sys/base/scan_block.hpp) or one word compare, and
// everything else (long strings, escapes, UTF-8, exponents, the end of the
// text) a call. A step reads only where the whole block lies in the text:
// the text is the file's mapping, with nothing readable after its last byte.
#pragma once
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string_view>

#include "core/json/json.hpp"
#include "core/json/json_members.hpp"
#include "core/json/jsontext.hpp"
#include "sys/base/scan_block.hpp"
#include "sys/base/decimal.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::scan::detail {

inline constexpr std::size_t no_offset = static_cast<std::size_t>(-1);

inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
inline bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }
inline int hex(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 0x20;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

class Lexer {
public:
  Lexer(std::string_view t, std::string_view subject, const std::function<void(std::size_t)>& passed)
      : t_(t),
        d_(reinterpret_cast<const unsigned char*>(t.data())),
        n_(t.size()),
        subject_(subject),
        passed_(passed),
        report_at_(passed ? chunk : no_offset) {}

protected:
  std::string_view t_;
  const unsigned char* d_;
  std::size_t n_;
  std::string_view subject_;
  // the closing bytes of the containers skip() has open, innermost last;
  // wider than a char, whose stores the compiler must assume change any
  // member (it would read d_ and n_ again after each)
  mutable std::array<std::uint16_t, json::max_depth + 1> closes_;
  static constexpr std::size_t chunk = std::size_t(16) << 20;
  const std::function<void(std::size_t)>& passed_;
  mutable std::size_t report_at_;  // the next offset to report, or no_offset

  // one compare per value on the hot path; the call only every 16 MiB
  void progress(std::size_t p) const {
    if (p < report_at_) return;
    std::size_t done = p / chunk * chunk;
    report_at_ = done + chunk;
    passed_(done);
  }

  // The message is json::parse's wherever it agrees that the text is bad
  // (validate_json throws it); only what it lets through is ours.
  [[noreturn, gnu::cold, gnu::noinline]] void bad(std::size_t at, std::string_view reason) const {
    validate_json(t_, subject_);
    fail_invalid_json(t_, at, reason, subject_);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void bad(std::size_t at) const { bad(at, "syntax error"); }

  // The end of the whitespace at p (n_ at the end of the text).
  [[gnu::noinline]] std::size_t ws(std::size_t p) const {
    for (;;) {
      if (p + 16 <= n_) {
        unsigned k = blank16(d_ + p);
        p += k;
        if (k == 16) continue;
      } else {
        while (p < n_ && (d_[p] == ' ' || d_[p] == '\n')) ++p;
        if (p == n_) return p;
      }
      if (d_[p] != '\t' && d_[p] != '\r') return p;
      ++p;
    }
  }

  // The next token at or after p inside a container, where the text may
  // not end. Inline for the usual gaps: none (compact text, a ',' after a
  // value) or a newline and less than 16 bytes of indentation.
  [[gnu::always_inline]] std::size_t token(std::size_t p) const {
    if (p + 17 <= n_) {
      if (d_[p] > ' ') return p;
      p += blank16(d_ + p);
      if (d_[p] > ' ') return p;
    }
    return token_rest(p);
  }
  // The same after a ',', '{' or '[': there pretty-printed text always has
  // a newline and indentation, and other text one space or none.
  [[gnu::always_inline]] std::size_t gap(std::size_t p) const {
    if (p + 17 <= n_) {
      p += blank16(d_ + p);
      if (d_[p] > ' ') return p;
    }
    return token_rest(p);
  }
  [[gnu::noinline]] std::size_t token_rest(std::size_t p) const {
    p = ws(p);
    if (p == n_) bad(p, "incomplete JSON");
    return p;
  }

  // The end of the string literal at p (its opening quote). Most strings
  // end within 16 bytes (names, short values) or 32 (dates, paths) with
  // nothing to check on the way: those cases are inline, the rest a call.
  [[gnu::always_inline]] std::size_t string(std::size_t p) const {
    if (p + 17 <= n_) {
      unsigned stops = string_stops16(d_ + p + 1);
      if (!stops) return string_rest(p + 17);  // a long string: its first 16 bytes are plain
      std::size_t q = p + 1 + first_bit(stops);
      if (d_[q] == '"') return q + 1;
    }
    return string_rest(p + 1);
  }
  [[gnu::always_inline]] std::size_t string_value(std::size_t p) const {
    if (p + 33 <= n_) {
      unsigned stops = string_stops16(d_ + p + 1);
      if (!stops) stops = string_stops16(d_ + p + 17) << 16;
      if (!stops) return string_rest(p + 33);  // a long string: its first 32 bytes are plain
      std::size_t q = p + 1 + first_bit(stops);
      if (d_[q] == '"') return q + 1;
    }
    return string_rest(p + 1);
  }

  // The rest of a string from p, 32 bytes a step: a long plain string (a
  // summary, a message) never leaves this loop, which needs few registers.
  [[gnu::noinline]] std::size_t string_rest(std::size_t p) const {
    for (; p + 32 <= n_; p += 32) {
      std::uint32_t stops = string_stops16(d_ + p) | string_stops16(d_ + p + 16) << 16;
      if (stops) {
        std::size_t at = p + first_bit(stops);
        if (d_[at] == '"') return at + 1;
        return string_stops(p, stops);
      }
    }
    return string_tail(p);
  }

  // The string from the block at p whose stops are known: from one stop (an
  // escape, a run of UTF-8, a control character) to the next without
  // looking again at the bytes between, then on to the next block.
  [[gnu::noinline]] std::size_t string_stops(std::size_t block, std::uint32_t stops) const {
    for (;;) {
      std::size_t p = block + 32;  // where the next block starts, unless a stop reaches past it
      while (stops) {
        std::size_t at = block + first_bit(stops);
        std::size_t next = stop(at);
        if (next == 0) return at + 1;
        if (next >= block + 32) {
          p = next;
          break;
        }
        stops &= ~0u << (next - block);
      }
      if (p + 32 > n_) return string_tail(p);
      block = p;
      stops = string_stops16(d_ + p) | string_stops16(d_ + p + 16) << 16;
    }
  }

  // The last bytes of the text one at a time: a block would read past it.
  [[gnu::noinline]] std::size_t string_tail(std::size_t p) const {
    for (;;) {
      if (p >= n_) bad(p, "incomplete JSON");
      unsigned char c = d_[p];
      if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
        ++p;
      } else {
        std::size_t next = stop(p);
        if (next == 0) return p + 1;
        p = next;
      }
    }
  }

  // Past the string byte at p that is not plain: 0 when it is the closing
  // quote (no string ends at offset 0)
  std::size_t stop(std::size_t p) const {
    unsigned char c = d_[p];
    if (c == '"') return 0;
    if (c == '\\') return escape(p);
    if (c >= 0x80) return utf8(p);
    bad(p);  // a control character
  }

  unsigned hex4(std::size_t p) const {  // 4 hex digits at p
    if (p + 4 > n_) bad(p, "incomplete JSON");
    unsigned v = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      int h = hex(d_[p + i]);
      if (h < 0) bad(p + i);
      v = v << 4 | static_cast<unsigned>(h);
    }
    return v;
  }

  std::size_t escape(std::size_t p) const {  // p at '\\'
    if (p + 1 >= n_) bad(p, "incomplete JSON");
    if (is_short_escape(d_[p + 1])) return p + 2;
    if (d_[p + 1] != 'u') bad(p + 1);
    unsigned u = hex4(p + 2);
    if (u >= 0xDC00 && u <= 0xDFFF) bad(p, "illegal trailing surrogate");
    if (u < 0xD800 || u > 0xDBFF) return p + 6;
    // a leading surrogate needs its trailing half right after it
    if (p + 8 > n_ || d_[p + 6] != '\\' || d_[p + 7] != 'u') bad(p + 6, "illegal leading surrogate");
    unsigned low = hex4(p + 8);
    if (low < 0xDC00 || low > 0xDFFF) bad(p + 6, "illegal leading surrogate");
    return p + 12;
  }

  // One UTF-8 sequence at p (a byte >= 0x80): the lead byte says the length
  // and, for E0, ED, F0 and F4, narrows the second byte's range, which rules
  // out overlong forms, surrogates and code points past U+10FFFF (C0, C1
  // and F5..FF lead nothing).
  std::size_t utf8_char(std::size_t p) const {
    unsigned char c = d_[p];
    std::size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (len == 0) bad(p);
    if (p + len > n_) bad(p, "incomplete JSON");
    if (!is_continuation(d_[p + 1])) bad(p + 1);
    if (len == 2) return p + 2;  // the common case: Latin letters, punctuation
    if (!is_continuation(d_[p + 2])) bad(p + 2);
    if (len == 4 && !is_continuation(d_[p + 3])) bad(p + 3);
    unsigned char second = d_[p + 1];
    if ((c == 0xE0 && second < 0xA0) || (c == 0xED && second > 0x9F) || (c == 0xF0 && second < 0x90) ||
        (c == 0xF4 && second > 0x8F))
      bad(p);
    return p + len;
  }
  // non-ASCII text comes in runs (a word, a line of CJK): one call for all
  std::size_t utf8(std::size_t p) const {
    do p = utf8_char(p);
    while (p < n_ && d_[p] >= 0x80);
    return p;
  }

  std::size_t digits(std::size_t p) const {
    while (p + 8 <= n_) {
      unsigned k = digits8(d_ + p);
      p += k;
      if (k < 8) return p;
    }
    while (p < n_ && is_digit(d_[p])) ++p;
    return p;
  }

  // A number at p. Most are short integers or decimals with no exponent,
  // whose digits one step of 8 bytes each reads and which no limit
  // concerns: that case is inline, the rest a call.
  [[gnu::always_inline]] std::size_t number(std::size_t p) const {
    std::size_t q = p + (d_[p] == '-');
    if (q + 16 <= n_) {
      unsigned k = digits8(d_ + q);
      if (k - 1 < 7 && (k == 1 || d_[q] != '0')) {
        q += k;
        if (d_[q] == '.') {
          k = digits8(d_ + q + 1);
          q += k + 1;
          if (k - 1 >= 7) return number_rest(p);
        }
        if ((d_[q] | 0x20) != 'e') return q;
      }
    }
    return number_rest(p);
  }

  [[gnu::noinline]] std::size_t number_rest(std::size_t p) const {
    std::size_t start = p;
    if (d_[p] == '-') ++p;
    if (p >= n_) bad(p, "incomplete JSON");
    long long int_digits = 0;  // of the integer part, leading zero not counted
    if (d_[p] == '0') {
      ++p;
    } else if (is_digit(d_[p])) {
      std::size_t first = p;
      p = digits(p);
      int_digits = static_cast<long long>(p - first);
    } else {
      bad(p);
    }
    if (p < n_ && d_[p] == '.') {
      ++p;
      if (p >= n_ || !is_digit(d_[p])) bad(p);
      p = digits(p);
    }
    long long exp = 0;
    if (p < n_ && (d_[p] | 0x20) == 'e') p = exponent(p + 1, exp);
    check_number(start, p, int_digits, exp);
    return p;
  }

  // The exponent's sign and digits from p (after the 'e'); exp its value,
  // saturated at 100000000
  std::size_t exponent(std::size_t p, long long& exp) const {
    bool neg = false;
    if (p < n_ && (d_[p] == '+' || d_[p] == '-')) neg = d_[p++] == '-';
    if (p >= n_ || !is_digit(d_[p])) bad(p);
    while (p < n_ && is_digit(d_[p])) {
      if (exp < 100000000) exp = exp * 10 + (d_[p] - '0');
      ++p;
    }
    if (neg) exp = -exp;
    return p;
  }

  void check_number(std::size_t start, std::size_t end, long long int_digits, long long exp) const {
    // Boost.JSON, which parses the values printed, refuses an exponent
    // past INT_MAX, or one that its count of digits pushes there, even on
    // 0e...: a text it cannot read is no number here either. Only such
    // extremes (a saturated exponent, a literal of 100 MB) are asked.
    if (exp >= 100000000 || exp <= -100000000 || end - start >= 100000000) {
      try {
        validate_json(t_.substr(start, end - start), subject_);
      } catch (const Error&) {
        bad(start, "exponent overflow");
      }
    }
    // Only a literal that may pass DBL_MAX (about 1.8e308) is converted to
    // find out: a finite number is what every reader can hold.
    if (int_digits + exp > 308 && !is_finite_json_number(t_.substr(start, end - start)))
      bad(start, "number out of range");
  }

  // true, false or null at p, or the error for what is no value at all:
  // one compare of 4 bytes for each word, inline
  [[gnu::always_inline]] std::size_t literal(std::size_t p) const {
    if (p + 5 <= n_) {
      std::uint32_t w = load4(d_ + p);
      if (w == word4("true") || w == word4("null")) return p + 4;
      if (w == word4("fals") && d_[p + 4] == 'e') return p + 5;
    }
    return literal_rest(p);
  }
  [[gnu::noinline]] std::size_t literal_rest(std::size_t p) const {
    std::string_view word = d_[p] == 't' ? "true" : d_[p] == 'f' ? "false" : "null";
    if (n_ - p < word.size() || std::memcmp(d_ + p, word.data(), word.size()) != 0) bad(p);
    return p + word.size();
  }

  [[gnu::always_inline]] std::size_t scalar(std::size_t p) const {
    unsigned char c = d_[p];
    if (c == '"') return string_value(p);
    if (c == '-' || is_digit(c)) return number(p);
    return literal(p);
  }

  // A member's name and colon, from p at its opening quote: where its
  // value starts. Inline for ": " and ":" before the value.
  [[gnu::always_inline]] std::size_t member(std::size_t p) const {
    if (d_[p] != '"') bad(p);
    p = string(p);
    if (p + 3 <= n_) {
      if (load2(d_ + p) == word2(": ") && d_[p + 2] > ' ') return p + 2;
      if (d_[p] == ':' && d_[p + 1] > ' ') return p + 1;
    }
    return colon(p);
  }
  [[gnu::noinline]] std::size_t colon(std::size_t p) const {
    p = ws(p);
    if (p >= n_ || d_[p] != ':') bad(p);
    return token(p + 1);
  }

  // A value nobody wants, at p inside the text: validated and skipped
  // without recursion; depth is the number of containers already open
  // around it.
  std::size_t skip(std::size_t p, std::size_t depth) const {
    if (d_[p] != '{' && d_[p] != '[') return scalar(p);
    const std::size_t room = json::max_depth - depth;
    std::size_t top = 0;      // containers open here
    unsigned char close = 0;  // the innermost's closing byte
    for (;;) {
      unsigned char c = d_[p];
      if (c == '{' || c == '[') {
        if (top == room) bad(p, "too deep");
        close = static_cast<unsigned char>(c + 2);  // '}' and ']' follow their openers but one
        closes_[top++] = close;
        p = gap(p + 1);
        if (d_[p] != close) {
          if (close == '}') p = member(p);
          continue;
        }
      } else {
        p = scalar(p);
      }
      // after a value: a ',' and the next, or the ends of containers
      for (;;) {
        if (top == 0) return p;
        p = token(p);
        if (d_[p] == ',') {
          progress(p);
          p = gap(p + 1);
          if (close == '}') p = member(p);
          break;
        }
        if (d_[p] != close) bad(p);
        ++p;
        if (--top) close = static_cast<unsigned char>(closes_[top - 1]);
      }
    }
  }
};

}  // namespace loopkit::scan::detail
