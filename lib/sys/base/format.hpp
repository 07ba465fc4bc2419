// Text formatting for messages and numbers: loopkit::format("{}: {}", a, b).
// The part of fmt the tools use, in a few kilobytes instead of fmt's 60 in
// every tool (issue 24): replacement fields `{}`, `{:[0][WIDTH|{}][.PREC][x|X|d|f]}`
// and `{{`/`}}`, over strings, characters, integers and doubles. A format
// string is checked when the call is compiled, as fmt checks it: a field
// count that does not match the arguments, or a spec outside that grammar,
// does not compile. The text matches fmt's byte for byte (tests/unit).
#pragma once
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace loopkit {

namespace format_detail {

// How many arguments a format string consumes, or -1 when it is malformed.
consteval int count_arguments(std::string_view s) {
  int n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '}') {
      if (i + 1 < s.size() && s[i + 1] == '}') {
        ++i;
        continue;
      }
      return -1;
    }
    if (s[i] != '{') continue;
    if (i + 1 < s.size() && s[i + 1] == '{') {
      ++i;
      continue;
    }
    ++i;
    ++n;
    if (i < s.size() && s[i] == ':') {
      ++i;
      if (i < s.size() && s[i] == '0') ++i;
      if (i + 1 < s.size() && s[i] == '{' && s[i + 1] == '}') {
        i += 2;
        ++n;
      } else {
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      }
      if (i < s.size() && s[i] == '.') {
        ++i;
        if (i >= s.size() || s[i] < '0' || s[i] > '9') return -1;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
      }
      if (i < s.size() && (s[i] == 'x' || s[i] == 'X' || s[i] == 'd' || s[i] == 'f')) ++i;
    }
    if (i >= s.size() || s[i] != '}') return -1;
  }
  return n;
}

// Writes the shortest decimal that reads back as d, laid out as fmt's "{}"
// lays it out (lib/sys/base/format_double.cpp: only the tools that format a
// double link its tables).
void append_shortest(std::string& out, double d);
// printf's "%.*f" (glibc's, which every static tool holds already).
void append_fixed(std::string& out, double d, int precision);

struct Arg {
  enum Kind : unsigned char { text, signed_int, unsigned_int, character, floating };
  Kind kind;
  union {
    std::string_view s;
    long long i;
    unsigned long long u;
    char c;
    double d;
  };
  void (*shortest)(std::string&, double) = nullptr;

  template <class T>
  requires std::convertible_to<const T&, std::string_view> Arg(const T& v) : kind(text), s(v) {}
  Arg(char v) : kind(character), c(v) {}
  Arg(bool v) : kind(text), s(v ? "true" : "false") {}
  template <std::signed_integral T>
  requires(!std::same_as<T, char> && !std::same_as<T, bool>) Arg(T v) : kind(signed_int), i(v) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) Arg(T v) : kind(unsigned_int), u(v) {}
  // the pointer names append_shortest only where a double is formatted
  Arg(double v) : kind(floating), d(v), shortest(&append_shortest) {}
};

std::string vformat(std::string_view spec, const Arg* args, std::size_t count);

}  // namespace format_detail

template <class... A>
struct FormatString {
  std::string_view text;
  template <class S>
  requires std::convertible_to<const S&, std::string_view>
  consteval FormatString(const S& s) : text(s) {
    // a throw in a constant evaluation is a compile error naming this line
    if (format_detail::count_arguments(text) != int(sizeof...(A)))
      throw "format: the fields do not match the arguments";
  }
};

template <class... A>
std::string format(FormatString<std::type_identity_t<A>...> f, const A&... args) {
  if constexpr (sizeof...(A) == 0) {
    return format_detail::vformat(f.text, nullptr, 0);
  } else {
    const format_detail::Arg list[] = {format_detail::Arg(args)...};
    return format_detail::vformat(f.text, list, sizeof...(A));
  }
}

}  // namespace loopkit
