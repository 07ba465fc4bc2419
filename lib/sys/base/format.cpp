// loopkit::format's engine: the spec was checked when the call compiled
// (format.hpp), so this reads it without a second validation.
#include "sys/base/format.hpp"

#include <cstdio>

namespace loopkit::format_detail {
namespace {

struct Spec {
  bool zero = false;
  int width = 0;
  int precision = -1;
  char type = 0;
};

// Reads the spec between ':' and '}' at s[i], taking a dynamic width from
// the arguments; returns the index of the closing '}'.
std::size_t read_spec(std::string_view s, std::size_t i, Spec& spec, const Arg* args, std::size_t& next) {
  if (s[i] == '0') {
    spec.zero = true;
    ++i;
  }
  if (s[i] == '{') {
    const Arg& w = args[next++];
    spec.width = int(w.kind == Arg::signed_int ? w.i : (long long)w.u);
    i += 2;
  }
  for (; s[i] >= '0' && s[i] <= '9'; ++i) spec.width = spec.width * 10 + (s[i] - '0');
  if (s[i] == '.') {
    spec.precision = 0;
    for (++i; s[i] >= '0' && s[i] <= '9'; ++i) spec.precision = spec.precision * 10 + (s[i] - '0');
  }
  if (s[i] != '}') spec.type = s[i++];
  return i;
}

void append_unsigned(std::string& out, unsigned long long v, char type) {
  char digits[24];
  char* end = digits + sizeof digits;
  char* p = end;
  if (type == 'x' || type == 'X') {
    const char* hex = type == 'x' ? "0123456789abcdef" : "0123456789ABCDEF";
    do *--p = hex[v & 15];
    while (v >>= 4);
  } else {
    do *--p = char('0' + v % 10);
    while (v /= 10);
  }
  out.append(p, std::size_t(end - p));
}

// Pads what was appended from start on to the spec's width: numbers to the
// right (with zeros after the sign when asked), text to the left, as fmt.
void pad(std::string& out, std::size_t start, const Spec& spec, bool number) {
  std::size_t len = out.size() - start;
  if (spec.width <= 0 || len >= std::size_t(spec.width)) return;
  std::size_t fill = std::size_t(spec.width) - len;
  if (!number) {
    out.append(fill, ' ');
  } else if (spec.zero) {
    out.insert(start + (out[start] == '-' ? 1 : 0), fill, '0');
  } else {
    out.insert(start, fill, ' ');
  }
}

void append_arg(std::string& out, const Arg& a, const Spec& spec) {
  std::size_t start = out.size();
  bool number = true;
  switch (a.kind) {
    case Arg::text:
      out += a.s;
      number = false;
      break;
    case Arg::character:
      if (spec.type == 0) {
        out += a.c;
        number = false;
      } else {
        append_unsigned(out, (unsigned char)a.c, spec.type);
      }
      break;
    case Arg::signed_int:
      if (a.i < 0) out += '-';
      append_unsigned(out, a.i < 0 ? 0ULL - (unsigned long long)a.i : (unsigned long long)a.i, spec.type);
      break;
    case Arg::unsigned_int: append_unsigned(out, a.u, spec.type); break;
    case Arg::floating:
      if (spec.precision >= 0) {
        append_fixed(out, a.d, spec.precision);
      } else {
        a.shortest(out, a.d);
      }
      break;
  }
  pad(out, start, spec, number);
}

}  // namespace

void append_fixed(std::string& out, double d, int precision) {
  char buf[64];
  int n = std::snprintf(buf, sizeof buf, "%.*f", precision, d);
  if (n >= 0 && std::size_t(n) < sizeof buf) {
    out.append(buf, std::size_t(n));
    return;
  }
  std::size_t at = out.size();
  out.resize(at + std::size_t(n) + 1);
  std::snprintf(out.data() + at, std::size_t(n) + 1, "%.*f", precision, d);
  out.resize(at + std::size_t(n));
}

std::string vformat(std::string_view s, const Arg* args, std::size_t count) {
  std::string out;
  out.reserve(s.size() + 16 * count);
  std::size_t next = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '}') {
      out += '}';
      ++i;  // the second brace of "}}"
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (s[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    // the field's argument comes before its dynamic width's, as in fmt
    std::size_t field = next++;
    Spec spec;
    ++i;
    if (s[i] == ':') i = read_spec(s, i + 1, spec, args, next);
    if (field < count) append_arg(out, args[field], spec);
  }
  return out;
}

}  // namespace loopkit::format_detail
