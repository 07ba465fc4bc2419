// gzip in memory, for .gz state and save files.
#pragma once
#include <string>
#include <string_view>

namespace loopkit {

// The one rule for whether bytes are gzip: they start with gzip's magic
// number, or, when a name is given, it ends in ".gz" and they are not empty
// (then bytes that are not gzip are corrupt, exit 3 from gunzip). A writer
// passes no name: a file it created plain is read back plain.
bool is_gzip(std::string_view data, std::string_view name = {});
std::string gunzip(std::string_view data, std::string_view subject);  // corrupt: exit 3
std::string gzip(std::string_view data);

}  // namespace loopkit
