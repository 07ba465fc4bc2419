// Folders: names of paths, creating and syncing folders, listing them, and
// the folder-wide flock that serialises every change to an existing name in
// one folder (the lock tools rely on it).
#pragma once
#include <cstddef>
#include <fcntl.h>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "sys/base/fd.hpp"

namespace loopkit {

// The folder part of a path ("." when none) and the last component.
std::string dir_name(const std::string& path);
std::string base_name(const std::string& path);

// The longest name a folder entry may have (NAME_MAX on Linux's file systems)
constexpr std::size_t longest_name = 255;
// name, or what stands for it in the names of its side files (temporary
// files, marks, tickets: ".NAME.tmp") so that extra more bytes still fit in
// longest_name: a name too long for that is cut (at a character boundary)
// and ended by "~" and 16 hex digits of a hash of the whole name, the same
// for the same name and different for names that differ past the cut.
std::string name_stem(std::string_view name, std::size_t extra);

// An open folder through which files in it are created, linked, renamed
// and removed by their own names (*at() calls): the folder is opened once,
// so that each of them acts in that one folder even if a link on the way
// to it is changed meanwhile. Links on the way to it are followed (the
// caller's layout); the names used through it are single components.
class Folder {
public:
  // exit 4 when it cannot be opened; "." is the working folder, named by
  // AT_FDCWD (no tool changes it), opened only for its fsync
  explicit Folder(const std::string& dir);
  Folder(Fd fd, std::string dir) : fd_(std::move(fd)), path_(std::move(dir)) {}
  // dir open as fd, which the caller keeps open while the Folder is used
  static Folder borrowed(int fd, std::string dir) {
    Folder f(Fd(), std::move(dir));
    f.borrowed_ = fd;
    return f;
  }
  // for the *at() calls only (AT_FDCWD for "."), never fstat or flock
  int fd() const { return fd_ ? fd_.get() : borrowed_; }
  const std::string& path() const { return path_; }
  // "DIR/name" for messages ("name" alone in ".")
  std::string shown(std::string_view name) const;
  // fsync(2), so that a rename or link in it survives a crash; exit 4
  void sync() const;
  // The same after a commit point, where a failure is a warning (exit
  // status 0): the change is made, and saying otherwise would make a caller
  // that retries apply it twice.
  void sync_after_commit() const;

private:
  Fd fd_;
  std::string path_;
  int borrowed_ = AT_FDCWD;  // without fd_: the working folder, or a borrowed one
};

// mkdir -p; new folders get mode
void make_dirs(const std::string& path, mode_t mode = 0755);
// fsync(2) of the folder, so that a rename or link in it survives a crash
void fsync_dir(const std::string& dir);
// the same after a commit point: a failure is a warning (Folder::sync_after_commit)
void sync_folder_after_commit(const std::string& dir);
bool is_folder(const std::string& path);  // follows symlinks
// Whether the open folder fd is the folder at path (symlinks followed):
// a flock taken on fd is then the one lock_folder(path) would wait for.
bool is_same_folder(int fd, const std::string& path);
// What a name is, by one stat(2) where it exists: a folder (links
// followed), anything else (a dangling link too), or missing (no name)
enum class PathKind { missing, folder, other };
PathKind path_kind(const std::string& path);
// The working folder as getcwd(3) gives it: absolute, without symlinks; ""
// when it cannot be told (removed meanwhile, too long)
std::string current_folder();

// The names in a folder that end in suffix (dot files excluded), sorted.
std::vector<std::string> list_folder(const std::string& dir, const std::string& suffix);
// The same, each with whether the folder listed it as a regular file
// (d_type: a file so listed can be opened without a look first)
struct FolderEntry {
  std::string name;
  bool regular = false;
};
std::vector<FolderEntry> folder_entries(const std::string& dir, const std::string& suffix);
// The names in a folder that start with prefix (dot files too), sorted;
// none when the folder cannot be read
std::vector<std::string> names_starting_with(const std::string& dir, std::string_view prefix);
// The names of the regular files (lstat: symlinks excluded) directly in dir
// that the calling user owns, sorted; a missing dir has none.
std::vector<std::string> own_regular_files(const std::string& dir);

// An exclusive flock on the folder itself, held until the Fd is closed.
// Waits for other holders; exit 4 when the folder cannot be opened or locked.
// Where folders cannot be flocked (NFS), the guard file .loopkit-folder-lock
// in it is locked instead; a link or special file there is refused (exit 4).
Fd lock_folder(const std::string& dir);

}  // namespace loopkit
