#include "sys/beneath.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/error.hpp"
#include "sys/fd.hpp"
#include "sys/folder.hpp"
#include "sys/tempfile.hpp"

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

void write_file_beneath(const std::string& dir, std::string_view rel, std::string_view data, mode_t file_mode,
                        mode_t dir_mode) {
  if (!is_plain_relative(rel)) fail_data("refusing to write " + quoted(rel) + " outside " + quoted(dir));
  make_dirs(dir, dir_mode);
  Fd at = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!at) fail_system(errno, "open folder", dir);
  auto parts = components(rel);
  std::string shown = dir;
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
