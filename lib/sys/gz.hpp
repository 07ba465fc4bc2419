// gzip in memory, for .gz state and save files.
#pragma once
#include <string>
#include <string_view>

namespace loopkit {

bool is_gzip(std::string_view data);
std::string gunzip(std::string_view data, std::string_view subject);  // corrupt: exit 3
std::string gzip(std::string_view data);

}  // namespace loopkit
