#include "sys/fs/link.hpp"

#include <cerrno>
#include <climits>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/folder.hpp"

namespace loopkit {

namespace {
// The kernel's fs.protected_symlinks rule, which our own readlink() walk
// would otherwise bypass: in a sticky world-writable folder (/tmp), a link
// is followed only if the follower or the folder's owner owns it; another
// user's link there can send a writer anywhere that user chose.
void check_may_follow(const std::string& link) {
  struct stat l, d;
  if (lstat(link.c_str(), &l) != 0 || stat(dir_name(link).c_str(), &d) != 0) return;  // gone: not followed
  if ((d.st_mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH)) return;
  if (l.st_uid == d.st_uid || l.st_uid == geteuid()) return;
  fail(Exit::system,
       "cannot follow " + quoted(link) + ": a symbolic link of another user in a sticky world-writable folder");
}
}  // namespace

std::string resolve_symlinks(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    char buf[PATH_MAX];
    ssize_t n = readlink(p.c_str(), buf, sizeof buf - 1);
    if (n < 0) return p;  // not a link (or missing): the path itself
    check_may_follow(p);
    std::string target(buf, static_cast<size_t>(n));
    if (target.empty() || target[0] != '/') {
      std::string dir = dir_name(p);
      target = (dir == "." ? "" : dir + "/") + target;
    }
    p = target;
  }
  fail_system(ELOOP, "resolve", path);
}

bool path_exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::optional<FileId> file_id(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

namespace {
// path's folder, open only for the *at() calls on its last name; nullopt
// when the folder itself is missing (so is the name)
std::optional<Folder> folder_of(const std::string& path) {
  const std::string dir = dir_name(path);
  if (dir == ".") return Folder(Fd(), dir);  // AT_FDCWD
  Fd fd = open_fd(dir, O_PATH | O_DIRECTORY);
  if (fd) return Folder(std::move(fd), dir);
  if (errno == ENOENT) return std::nullopt;
  fail_system(errno, "open folder", dir);
}
}  // namespace

bool remove_file(const Folder& folder, std::string_view name) {
  if (unlinkat(folder.fd(), std::string(name).c_str(), 0) == 0) return true;
  if (errno == ENOENT) return false;
  fail_system(errno, "remove", folder.shown(name));
}

bool remove_file(const std::string& path) {
  std::optional<Folder> folder = folder_of(path);
  return folder && remove_file(*folder, base_name(path));
}

Removal remove_file_if_same(const Folder& folder, std::string_view name, const FileId& id) {
  struct stat st;
  if (fstatat(folder.fd(), std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Removal::missing;
    fail_system(errno, "remove", folder.shown(name));
  }
  if (!S_ISREG(st.st_mode) || FileId{st.st_dev, st.st_ino} != id) return Removal::changed;
  return remove_file(folder, name) ? Removal::removed : Removal::missing;
}

Removal remove_file_if_same(const std::string& path, const FileId& id) {
  std::optional<Folder> folder = folder_of(path);
  return folder ? remove_file_if_same(*folder, base_name(path), id) : Removal::missing;
}

}  // namespace loopkit
