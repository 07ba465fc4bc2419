// Rewriting a gzip file as its text: gz_file.hpp.
#include "sys/fs/gz_file.hpp"

#include <sys/stat.h>

#include "sys/fs/file.hpp"
#include "sys/gz/gz.hpp"

namespace loopkit {

bool gzip_by_name(std::string_view path) { return path.size() > 3 && path.substr(path.size() - 3) == ".gz"; }

void rewrite_gzip_locked(const std::string& path, const std::function<std::string(std::string_view text)>& change,
                         mode_t mode, bool sync) {
  LockedForReplace held = lock_for_replace(path);
  std::string text;
  if (held.exists && !held.contents.view().empty()) text = gunzip(held.contents.view(), path);
  const std::string bytes = gzip(change(text));
  AtomicWrite how{.sync = sync};
  if (held.exists) {
    how.held = &held;
  } else {
    const mode_t mask = umask(0);
    umask(mask);
    how.mode = mode & ~mask;
    how.keep_existing_mode = false;
  }
  // written while held.fd keeps the flock, in the folder it resolved: a
  // writer waiting on the old inode sees the rename and reads the new file
  write_file_atomic(held.at, bytes, how);
}

}  // namespace loopkit
