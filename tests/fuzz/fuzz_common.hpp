// Shared by the libFuzzer targets in this folder (see docs/fuzzing.md).
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "sys/base/error.hpp"

namespace fuzz {

// A property failed: say which and abort, so libFuzzer saves the input.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\nFUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}
inline void check(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// The repro format (tests/fuzz/corpus/repro/): the first line is the JSON
// document and each further line one state-set argument. So that documents
// may span lines (layouts matter to the writer), an input whose first line
// is empty holds the document up to the next empty line instead.
struct Split {
  std::string_view document;
  std::vector<std::string_view> lines;
};
inline Split split_input(std::string_view in) {
  Split s;
  std::size_t end;
  if (!in.empty() && in[0] == '\n') {
    std::size_t blank = in.find("\n\n", 1);
    end = blank == std::string_view::npos ? in.size() : blank + 1;
    s.document = in.substr(1, end - 1);
    if (end < in.size()) ++end;  // the empty line
  } else {
    end = in.find('\n');
    if (end == std::string_view::npos) end = in.size();
    s.document = in.substr(0, end);
    if (end < in.size()) ++end;
  }
  while (end < in.size()) {
    std::size_t nl = in.find('\n', end);
    if (nl == std::string_view::npos) nl = in.size();
    s.lines.push_back(in.substr(end, nl - end));
    end = nl + 1;
  }
  return s;
}

// Equal as JSON values: numbers by value (2, 2.0 and 2e0 are one number),
// objects whatever the member order.
// A number literal (a number kept as written, see core/json/json.hpp) is a
// number too: against any other number it compares by its nearest double,
// which is what a reader that keeps no literals makes of the written text
// (give or take the reader's rounding).
inline bool same_json(const loopkit::json::value& a, const loopkit::json::value& b) {
  namespace json = loopkit::json;
  if (json::is_number_literal(a) || json::is_number_literal(b)) {
    if (!json::is_numeric(a) || !json::is_numeric(b)) return false;
    auto nearest = [](const json::value& v) {
      if (json::is_number_literal(v)) return std::strtod(std::string(json::literal_text(v)).c_str(), nullptr);
      return v.to_number<double>();
    };
    // both sides read with correct rounding (json::nearest_double, strtod)
    return nearest(a) == nearest(b);
  }
  if (a.is_number() && b.is_number()) {
    auto exact = [](const loopkit::json::value& v) -> long double {
      if (v.is_int64()) return static_cast<long double>(v.get_int64());
      if (v.is_uint64()) return static_cast<long double>(v.get_uint64());
      return static_cast<long double>(v.get_double());
    };
    return exact(a) == exact(b);
  }
  if (a.kind() != b.kind()) return false;
  if (a.is_array()) {
    const auto &x = a.get_array(), &y = b.get_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!same_json(x[i], y[i])) return false;
    return true;
  }
  if (a.is_object()) {
    const auto &x = a.get_object(), &y = b.get_object();
    if (x.size() != y.size()) return false;
    for (const auto& kv : x) {
      const auto* other = y.if_contains(kv.key());
      if (!other || !same_json(kv.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

// A path written so that it cannot be misread: every name quoted.
inline std::string canonical_path(const loopkit::Path& p) {
  if (p.segments.empty()) return ".";
  std::string s;
  for (const auto& seg : p.segments) {
    if (seg.kind == loopkit::Segment::key) s += "[" + loopkit::json::quote(seg.name) + "]";
    else if (seg.kind == loopkit::Segment::elem) s += "[" + std::to_string(seg.index) + "]";
    else s += "[]";
  }
  return s;
}

inline bool same_segments(const loopkit::Path& a, const loopkit::Path& b) {
  if (a.segments.size() != b.segments.size()) return false;
  for (std::size_t i = 0; i < a.segments.size(); ++i) {
    const auto &x = a.segments[i], &y = b.segments[i];
    if (x.kind != y.kind || x.name != y.name || x.index != y.index) return false;
  }
  return true;
}

inline bool names_are_utf8(const loopkit::Path& p) {
  for (const auto& seg : p.segments)
    if (seg.kind == loopkit::Segment::key && !loopkit::json::is_utf8(seg.name)) return false;
  return true;
}

// Only loopkit's own errors may leave a parser, and only with these codes.
inline void check_code(const loopkit::Error& e, std::initializer_list<loopkit::Exit> allowed, const char* where) {
  for (auto c : allowed)
    if (e.code() == c) return;
  finding(std::string(where) + ": unexpected exit code " + std::to_string(static_cast<int>(e.code())) + ": " +
          e.what());
}

// Numbers that overflow a double read as infinity: never valid data.
inline bool finite_everywhere(const loopkit::json::value& v) {
  if (v.is_double()) return std::isfinite(v.get_double());
  if (v.is_array()) {
    for (const auto& e : v.get_array())
      if (!finite_everywhere(e)) return false;
  } else if (v.is_object()) {
    for (const auto& kv : v.get_object())
      if (!finite_everywhere(kv.value())) return false;
  }
  return true;
}

// LOOPKIT_FUZZ_KNOWN names classes of findings already reported (comma
// separated tags, listed in docs/fuzzing.md) whose inputs a target passes
// over, so that a long run finds others.
inline bool is_known(std::string_view tag) {
  static const std::string tags = std::getenv("LOOPKIT_FUZZ_KNOWN") ? std::getenv("LOOPKIT_FUZZ_KNOWN") : "";
  return ("," + tags + ",").find("," + std::string(tag) + ",") != std::string::npos;
}

}  // namespace fuzz
