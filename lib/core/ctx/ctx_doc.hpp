// The document helpers of core/ctx_*.cpp, internal to those files: reading
// and creating members along a path of keys, and the numbers a save holds.
#pragma once
#include <cmath>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/json/json.hpp"
#include "sys/base/error.hpp"
#include "sys/base/format.hpp"

namespace loopkit::ctx::detail {

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline std::string_view str(const json::value& v) {
  const auto& s = v.get_string();
  return {s.data(), s.size()};
}

inline const json::value* member(const json::value& v, std::string_view key) {
  return v.is_object() ? v.get_object().if_contains(key) : nullptr;
}

inline const json::value* at(const json::value& doc, std::initializer_list<std::string_view> keys) {
  const json::value* v = &doc;
  for (auto k : keys)
    if (!(v = member(*v, k))) return nullptr;
  return v;
}

// The object at doc.KEYS..., created (replacing anything else) on the way.
json::object& object_at(json::value& doc, std::initializer_list<std::string_view> keys);

// A value set by --set keeps its literal text (1.0, 1e2) until it is
// written, so a number here may still be that literal.
std::optional<double> number(const json::value* v);

// "NAME=VALUE" split at its first '='; no '=' or an empty NAME: exit 2
// naming the option and the form it takes.
std::pair<std::string_view, std::string_view> split_eq(std::string_view s, std::string_view option,
                                                       std::string_view form);

// fill_defaults with a warning for each field filled: "'SUBJECT': missing
// 'PATH', using the default"
void fill_defaults_warning(json::value& doc, const std::string& subject, const std::string& now_iso,
                           const std::function<void(const std::string&)>& warn);

// The document in raw, gunzipped first when it is gzip (by its magic bytes,
// or an non-empty file named .gz); gz tells which.
json::value decode(std::string_view raw, const std::string& subject, bool& gz);

}  // namespace loopkit::ctx::detail
