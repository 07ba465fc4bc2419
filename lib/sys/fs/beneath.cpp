#include "sys/fs/beneath.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/folder.hpp"
#include "sys/fs/tempfile.hpp"

namespace loopkit {

namespace {
std::vector<std::string> components(std::string_view rel) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= rel.size()) {
    std::size_t slash = rel.find('/', i);
    if (slash == std::string_view::npos) slash = rel.size();
    std::string_view c = rel.substr(i, slash - i);
    if (!c.empty() && c != ".") parts.emplace_back(c);
    i = slash + 1;
  }
  return parts;
}
}  // namespace

bool is_plain_relative(std::string_view rel) {
  if (rel.empty() || rel[0] == '/' || rel.back() == '/' || rel.find('\0') != std::string_view::npos) return false;
  auto parts = components(rel);
  if (parts.empty() || parts.back() == "..") return false;
  return std::none_of(parts.begin(), parts.end(), [](const std::string& p) { return p == ".."; });
}

namespace {
// The folder of the file, opened beneath at in one call where the kernel has
// openat2 (Linux 5.6): no symlink, no "..", nothing outside at. An empty Fd
// when a folder is missing or a link is on the way (the walk then creates
// or names it) or when openat2 is missing or forbidden.
Fd open_existing_beneath(int at, const std::vector<std::string>& parts) {
  std::string rel;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) rel += (rel.empty() ? "" : "/") + parts[i];
  open_how how{};
  how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd;
  do fd = syscall(SYS_openat2, at, rel.c_str(), &how, sizeof how);
  while (fd < 0 && errno == EINTR);
  return Fd(fd < 0 ? -1 : static_cast<int>(fd));
}

// Where openat2 cannot: each folder opened relative to the one before with
// O_NOFOLLOW, created when missing; a symlink on the way is refused.
Fd walk_beneath(Fd at, const std::vector<std::string>& parts, mode_t dir_mode, std::string& shown) {
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    shown += "/" + parts[i];
    Fd next = open_fd_at(at.get(), parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!next && errno == ENOENT) {
      if (mkdirat(at.get(), parts[i].c_str(), dir_mode) != 0 && errno != EEXIST)
        fail_system(errno, "create folder", shown);
      next = open_fd_at(at.get(), parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    }
    if (!next) {
      struct stat st;
      if ((errno == ELOOP || errno == ENOTDIR) && fstatat(at.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode))
        fail(Exit::system, "refusing to write through symlink " + quoted(shown));
      fail_system(errno, "open folder", shown);
    }
    at = std::move(next);
  }
  return at;
}
}  // namespace

void write_file_beneath(const std::string& dir, std::string_view rel, std::string_view data, mode_t file_mode,
                        mode_t dir_mode) {
  if (!is_plain_relative(rel)) fail_data("refusing to write " + quoted(rel) + " outside " + quoted(dir));
  make_dirs(dir, dir_mode);
  Fd at = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!at) fail_system(errno, "open folder", dir);
  auto parts = components(rel);
  std::string shown = dir;
  if (parts.size() > 1) {
    if (Fd fast = open_existing_beneath(at.get(), parts)) {
      for (std::size_t i = 0; i + 1 < parts.size(); ++i) shown += "/" + parts[i];
      at = std::move(fast);
    } else {
      at = walk_beneath(std::move(at), parts, dir_mode, shown);
    }
  }
  const std::string& name = parts.back();
  const Folder folder(std::move(at), shown);
  shown += "/" + name;
  const mode_t umask_now = umask(0);
  umask(umask_now);
  TempFile tmp(folder, name, false, shown);
  write_all(tmp.fd(), data, shown);
  tmp.finish(file_mode & ~umask_now, nullptr, true);
  // renameat replaces a symlink planted at the name; it never follows it
  tmp.rename_over(false);
  folder.sync_after_commit();
}

}  // namespace loopkit
