#include "sys/fs/at_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/base/error.hpp"

namespace loopkit {

AtFile::AtFile(const std::string& path) : folder_(Fd(), dir_name(path)), path_(path), shown_(path) {
  name_ = base_name(path);
  // "DIR/": the folder itself, as open(2) of the path would find it
  if (name_.empty()) name_ = ".";
  const std::string& dir = folder_.path();
  if (dir == ".") return;  // AT_FDCWD
  Fd fd = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!fd && errno == EACCES) {
    // searchable but not readable (mode --x): the names in it can still be
    // looked at and opened, as through the path; only a write needs more
    folder_errno_ = EACCES;
    fd = open_fd(dir, O_PATH | O_DIRECTORY);
  }
  if (!fd) {
    folder_errno_ = errno;
    searchable_ = false;
    return;
  }
  folder_ = Folder(std::move(fd), dir);
}

AtFile AtFile::following_links(const std::string& path, std::string shown) {
  AtFile at(resolve_symlinks(path));
  at.shown_ = shown.empty() ? path : std::move(shown);
  return at;
}

AtFile AtFile::sibling(const std::string& name, std::string shown) const {
  std::string path = folder_.shown(name);
  if (shown.empty()) shown = path;
  AtFile at(Folder::borrowed(folder_.fd(), folder_.path()), name, std::move(path), std::move(shown));
  at.folder_errno_ = folder_errno_;
  at.searchable_ = searchable_;
  return at;
}

const Folder& AtFile::folder() const {
  if (folder_errno_) fail_system(folder_errno_, "open folder", folder_.path());
  return folder_;
}

bool AtFile::can_look() const {
  if (searchable_) return true;
  errno = folder_errno_;
  return false;
}

bool AtFile::look(struct stat& st, bool follow) const {
  return can_look() && fstatat(folder_.fd(), name_.c_str(), &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) == 0;
}

Fd AtFile::open(int flags, unsigned mode) const {
  if (!can_look()) return Fd();
  return open_fd_at(folder_.fd(), name_, flags, mode);
}

bool AtFile::exists() const { return can_look() && faccessat(folder_.fd(), name_.c_str(), F_OK, 0) == 0; }

Fd AtFile::open_folder() const {
  if (!can_look()) return Fd();
  return open_fd_at(folder_.fd(), ".", O_RDONLY | O_DIRECTORY);
}

void AtFile::sync_folder(const Commit& how) const {
  if (how.fail_on_folder_sync) folder_.sync();
  else folder_.sync_after_commit();
}

bool AtFile::commit_sync(TempFile& tmp, const Commit& how) const {
  if (how.along) how.along->stage();
  bool done = false;
  try {
    done = tmp.rename_over(how.only_if_present);
  } catch (...) {
    if (how.along) how.along->unstage();
    throw;
  }
  if (how.along) {
    if (done) how.along->settle();  // the old backup goes with its temporary name
    else how.along->unstage();
  }
  if (!done) return false;
  if (how.sync) sync_folder(how);
  return true;
}

bool AtFile::link_sync(TempFile& tmp, const Commit& how) const {
  if (!tmp.link_new()) return false;
  if (how.sync) sync_folder(how);
  return true;
}

}  // namespace loopkit
