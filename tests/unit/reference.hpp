// Reference semantics for the tests: a path looked up in a parsed document
// (Boost.JSON), as jq does. The tools look paths up in scanned text
// (textedit::lookup in lib/core/edit/textedit.hpp, one walk for state-get and
// state-set); these are what that walk must agree with.
#pragma once
#include <vector>

#include "core/json/json.hpp"
#include "core/scan/path.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::reference {

// Every value the path names ([] expands); nullptr where a member or element
// is missing or a value on the way is null. Indexing into a string, number
// or boolean is exit 3.
inline std::vector<const json::value*> lookup(const json::value& doc, const Path& path) {
  std::vector<const json::value*> cur{&doc}, next;
  for (const auto& seg : path.segments) {
    next.clear();
    for (const json::value* v : cur) {
      if (!v || v->is_null()) {
        next.push_back(nullptr);
        continue;
      }
      switch (seg.kind) {
        case Segment::key:
          if (!v->is_object())
            fail_data(loopkit::format("{}: cannot look up {} in {}", path.text, json::quote(seg.name),
                                      with_article(type_name(*v))));
          next.push_back(v->get_object().if_contains(seg.name));
          break;
        case Segment::elem: {
          if (!v->is_array())
            fail_data(
                loopkit::format("{}: cannot index {} with [{}]", path.text, with_article(type_name(*v)), seg.index));
          const auto& a = v->get_array();
          long long n = static_cast<long long>(a.size());
          long long i = seg.index < 0 ? n + seg.index : seg.index;
          next.push_back(i >= 0 && i < n ? &a[static_cast<std::size_t>(i)] : nullptr);
          break;
        }
        case Segment::all:
          if (v->is_array()) {
            for (const auto& e : v->get_array()) next.push_back(&e);
          } else if (v->is_object()) {
            for (const auto& kv : v->get_object()) next.push_back(&kv.value());
          } else {
            fail_data(loopkit::format("{}: cannot list the elements of a {}", path.text, type_name(*v)));
          }
          break;
      }
    }
    std::swap(cur, next);
  }
  return cur;
}

// The value at a path as --expect and --require read it: missing, or
// through a scalar, reads as null.
inline const json::value* value_at(const json::value& doc, const Path& path) {
  static const json::value null_value;
  try {
    auto found = lookup(doc, path);
    return found.size() == 1 && found[0] ? found[0] : &null_value;
  } catch (const Error&) {
    return &null_value;
  }
}

}  // namespace loopkit::reference
