#include "sys/fs/at_file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/base/error.hpp"
#include "sys/fs/link.hpp"

namespace loopkit {

namespace {
// dir opened for the names in it: for reading where it can be, else (mode
// --x: searchable, not readable) for looks and opens alone, as through the
// path; only a write needs more. err: why it is not open for reading.
Fd open_for_names(const std::string& dir, int& err, bool& searchable) {
  if (dir == ".") return Fd();  // AT_FDCWD
  Fd fd = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (fd) return fd;
  err = errno;
  if (err == EACCES) fd = open_fd(dir, O_PATH | O_DIRECTORY);
  if (!fd) {
    err = errno;
    searchable = false;
  }
  return fd;
}
}  // namespace

AtFile::AtFile(const std::string& path) : AtFile(dir_name(path), path) {}

// (dir is copied, not moved, into the Folder: the order in which its two
// arguments are made is the compiler's)
AtFile::AtFile(const std::string& dir, const std::string& path)
    : folder_(open_for_names(dir, folder_errno_, searchable_), dir), name_(base_name(path)), path_(path) {
  // "DIR/": the folder itself, as open(2) of the path would find it
  if (name_.empty()) name_ = ".";
}

AtFile AtFile::following_links(const std::string& path, std::string shown) {
  AtFile at(resolve_symlinks(path));
  at.shown_ = shown.empty() ? path : std::move(shown);
  if (at.shown_ == at.path_) at.shown_.clear();
  return at;
}

AtFile AtFile::sibling(const std::string& name, std::string shown) const {
  std::string path = folder_.shown(name);
  if (shown == path) shown.clear();
  AtFile at(Folder::borrowed(folder_.fd(), folder_.path()), name, std::move(path), std::move(shown));
  at.folder_errno_ = folder_errno_;
  at.searchable_ = searchable_;
  return at;
}

AtFile AtFile::borrowed() const {
  AtFile at(Folder::borrowed(folder_.fd(), folder_.path()), name_, path_, shown_);
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

}  // namespace loopkit
