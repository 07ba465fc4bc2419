#include "sys/folder.hpp"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/error.hpp"
#include "sys/file.hpp"
#include "sys/flock.hpp"

namespace loopkit {

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

std::vector<std::string> list_folder(const std::string& dir, const std::string& suffix) {
  DIR* d = opendir(dir.c_str());
  if (!d) fail_system(errno, "open folder", dir);
  std::vector<std::string> names;
  errno = 0;
  while (struct dirent* e = readdir(d)) {
    std::string_view name(e->d_name);
    if (name.empty() || name[0] == '.' || name.size() < suffix.size()) continue;
    if (name.substr(name.size() - suffix.size()) == suffix) names.emplace_back(name);
  }
  int err = errno;
  closedir(d);
  if (err) fail_system(err, "read folder", dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool is_folder(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::optional<FileId> file_id(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

std::optional<FileId> link_new_file(const std::string& path, std::string_view data, mode_t mode) {
  std::string dir = dir_name(path);
  std::string tmp = (dir == "." ? "" : dir + "/") + "." + base_name(path) + "." + std::to_string(getpid()) + ".tmp";
  try {
    struct stat st = write_new_file(tmp, data, mode, true);
    if (link(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      // NFS may report failure for a link that was made (liblockfile's check)
      struct stat tst;
      if (lstat(tmp.c_str(), &tst) != 0 || tst.st_nlink != 2) {
        unlink(tmp.c_str());
        if (err == EEXIST) return std::nullopt;
        fail_system(err, "create", path);
      }
    }
    unlink(tmp.c_str());
    return FileId{st.st_dev, st.st_ino};
  } catch (...) {
    unlink(tmp.c_str());
    throw;
  }
}

bool remove_file(const std::string& path) {
  if (unlink(path.c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  fail_system(errno, "remove", path);
}

Removal remove_file_if_same(const std::string& path, const FileId& id) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Removal::missing;
    fail_system(errno, "remove", path);
  }
  if (!S_ISREG(st.st_mode) || FileId{st.st_dev, st.st_ino} != id) return Removal::changed;
  return remove_file(path) ? Removal::removed : Removal::missing;
}

std::optional<FileSnapshot> read_file_snapshot(const std::string& path, size_t max_bytes) {
  struct stat st;
  Fd fd = open_regular_nofollow(path, st);
  if (!fd) return std::nullopt;
  FileSnapshot snap;
  snap.mtime = static_cast<int64_t>(st.st_mtime);
  snap.id = {st.st_dev, st.st_ino};
  if (max_bytes == SIZE_MAX) {
    snap.data = read_all(fd.get(), path);
  } else {
    // one byte more than allowed tells "exactly max_bytes" from "more"
    snap.data = read_up_to(fd.get(), max_bytes + 1, path);
    snap.too_big = snap.data.size() > max_bytes;
    if (snap.too_big) snap.data.resize(max_bytes);
  }
  return snap;
}

}  // namespace loopkit
