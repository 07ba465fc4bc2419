// Line helpers of the progress format. Internal to core/log/progress.cpp and
// core/log/progress_show.cpp.
#pragma once
#include <algorithm>
#include <string_view>

namespace loopkit::progress::text {

constexpr std::string_view kRule = "---";

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

inline bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

// Calls f(line) for each line of text, without its newline.
template <class F>
inline void for_each_line(std::string_view text, F f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Bytes of a progress file, whether an open regular file (read on demand)

}  // namespace loopkit::progress::text
