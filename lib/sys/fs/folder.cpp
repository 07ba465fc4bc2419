#include "sys/fs/folder.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/flock.hpp"

namespace loopkit {

std::string name_stem(std::string_view name, std::size_t extra) {
  if (name.size() + extra <= longest_name) return std::string(name);
  constexpr std::size_t hash_part = 1 + 16;  // "~" and 16 hex digits
  std::size_t keep = extra + hash_part < longest_name ? longest_name - extra - hash_part : 0;
  keep = std::min(keep, name.size());
  while (keep > 0 && keep < name.size() && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80)
    --keep;                                 // not inside a UTF-8 character
  uint64_t hash = 14695981039346656037ull;  // FNV-1a
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  std::string stem(name.substr(0, keep));
  stem += '~';
  for (int shift = 60; shift >= 0; shift -= 4) stem += "0123456789abcdef"[(hash >> shift) & 0xF];
  return stem;
}

std::string dir_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void make_dirs(const std::string& path, mode_t mode) {
  if (path.empty() || path == "." || path == "/") return;
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) fail_system(ENOTDIR, "create folder", path);
    return;
  }
  make_dirs(dir_name(path), mode);
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) fail_system(errno, "create folder", path);
}

namespace {
// 0 or the errno of fsync(2); some file systems cannot fsync a folder,
// which is no reason to fail
int sync_error(int fd) {
  if (fsync(fd) == 0 || errno == EINVAL || errno == ENOTSUP) return 0;
  return errno;
}
}  // namespace

Folder::Folder(const std::string& dir) : path_(dir) {
  if (dir == ".") return;
  fd_ = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!fd_) fail_system(errno, "open folder", dir);
}

std::string Folder::shown(std::string_view name) const {
  if (path_ == ".") return std::string(name);
  std::string s = path_;
  if (s.back() != '/') s += '/';
  return s.append(name);
}

namespace {
// The working folder is opened for its fsync only (a failed open is the
// sync's failure)
int sync_error(const Fd& fd, int borrowed) {
  if (fd) return sync_error(fd.get());
  if (borrowed != AT_FDCWD) return sync_error(borrowed);
  Fd here = open_fd(".", O_RDONLY | O_DIRECTORY);
  return here ? sync_error(here.get()) : errno;
}
}  // namespace

void Folder::sync() const {
  if (int err = sync_error(fd_, borrowed_)) fail_system(err, "sync folder", path_);
}

void Folder::sync_after_commit() const {
  if (int err = sync_error(fd_, borrowed_)) warn_system(err, "sync folder", path_);
}

void fsync_dir(const std::string& dir) { Folder(dir).sync(); }

void sync_folder_after_commit(const std::string& dir) {
  Fd d = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!d) warn_system(errno, "open folder", dir);
  else if (int err = sync_error(d.get())) warn_system(err, "sync folder", dir);
}

std::string current_folder() {
  std::string buf(PATH_MAX, '\0');
  if (!getcwd(buf.data(), buf.size())) return {};
  buf.resize(std::strlen(buf.c_str()));
  return buf;
}

bool is_same_folder(int fd, const std::string& path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool is_folder(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

PathKind path_kind(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? PathKind::folder : PathKind::other;
  return lstat(path.c_str(), &st) == 0 ? PathKind::other : PathKind::missing;  // a dangling link is a name
}

// getdents64(2) itself, where readdir(3) would fstat the folder first
std::vector<FolderEntry> folder_entries(const std::string& dir, const std::string& suffix) {
  Fd d = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!d) fail_system(errno, "open folder", dir);
  std::vector<FolderEntry> entries;
  alignas(8) char buf[16384];
  for (;;) {
    const ssize_t n = getdents64(d.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_system(errno, "read folder", dir);
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
      at += e->d_reclen;
      std::string_view name(e->d_name);
      if (name.empty() || name[0] == '.' || !name.ends_with(suffix)) continue;
      entries.push_back({std::string(name), e->d_type == DT_REG});
    }
  }
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return entries;
}

std::vector<std::string> list_folder(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> names;
  for (auto& e : folder_entries(dir, suffix)) names.push_back(std::move(e.name));
  return names;
}

std::vector<std::string> names_starting_with(const std::string& dir, std::string_view prefix) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (struct dirent* e = readdir(d))
    if (std::string_view(e->d_name).starts_with(prefix)) names.emplace_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> own_regular_files(const std::string& dir) {
  std::vector<std::string> names;
  Fd d = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!d) {
    if (errno == ENOENT) return names;
    fail_system(errno, "open folder", dir);
  }
  DIR* dp = fdopendir(d.get());
  if (!dp) fail_system(errno, "read folder", dir);
  d.release();  // closedir closes it
  const uid_t me = geteuid();
  errno = 0;
  while (struct dirent* e = readdir(dp)) {
    struct stat st;
    if (e->d_name[0] != '.' && fstatat(dirfd(dp), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_uid == me)
      names.emplace_back(e->d_name);
    errno = 0;
  }
  int err = errno;
  closedir(dp);
  if (err) fail_system(err, "read folder", dir);
  std::sort(names.begin(), names.end());
  return names;
}

Fd lock_folder(const std::string& dir) {
  Fd fd = open_fd(dir, O_RDONLY | O_DIRECTORY);
  if (!fd) fail_system(errno, "open folder", dir);
  int rc;
  do rc = flock(fd.get(), LOCK_EX);
  while (rc != 0 && errno == EINTR);
  if (rc == 0) return fd;
  // NFS emulates flock with byte-range locks, which need a descriptor open
  // for writing, and a folder cannot be opened so: lock a guard file in the
  // folder instead. Every client of an NFS folder takes this same path.
  if (errno != EBADF && errno != ENOLCK && errno != EOPNOTSUPP) fail_system(errno, "lock folder", dir);
  std::string guard = dir + "/.loopkit-folder-lock";
  Fd g = open_fd(guard, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
  if (!g) {
    int err = errno;
    struct stat st;
    if (lstat(guard.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) fail_not_regular("open", guard, st.st_mode);
    fail_system(err, "open", guard);
  }
  struct stat st;
  if (fstat(g.get(), &st) != 0) fail_system(errno, "stat", guard);
  if (!S_ISREG(st.st_mode)) fail_not_regular("open", guard, st.st_mode);
  flock_wait(g.get(), true, guard);
  return g;
}

}  // namespace loopkit
