#include "sys/fs/own_file.hpp"

#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/proc/proc.hpp"

namespace loopkit {

bool is_own_regular_file(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == effective_uid();
}

bool names_nothing(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

}  // namespace loopkit
