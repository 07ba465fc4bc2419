// Names and the files they stand for: following symlinks, telling whether
// a name still stands for the file that was read, and removing names.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace loopkit {

class Folder;

// The file that path names after following symlinks (path itself if none).
// A link in a sticky world-writable folder is followed only if the caller
// (euid) or the folder's owner owns it, as the kernel's fs.protected_symlinks
// has it: exit 4 otherwise, "cannot follow 'p': a symbolic link of another
// user in a sticky world-writable folder".
std::string resolve_symlinks(const std::string& path);
bool path_exists(const std::string& path);  // lstat: a dangling symlink exists

// Which file a name stands for: device and inode.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};
std::optional<FileId> file_id(const std::string& path);  // lstat; nullopt if missing

// unlink(2): true if removed, false if it was already gone; exit 4 otherwise.
// Every removal is of a name in an open folder (unlinkat on its descriptor).
bool remove_file(const Folder& folder, std::string_view name);
bool remove_file(const std::string& path);  // in path's folder, opened for it

// unlink(2) of path only if the name still stands for the regular file id
// (lstat, so a link is never followed): what was checked is what goes. A
// name since replaced (by a link, say) is left alone: `changed`. Exit 4 on
// other errors. Callers hold the folder's lock, so that between the check
// and the unlink only processes that ignore that lock can change the name.
enum class Removal { removed, missing, changed };
Removal remove_file_if_same(const Folder& folder, std::string_view name, const FileId& id);
Removal remove_file_if_same(const std::string& path, const FileId& id);  // in path's folder

}  // namespace loopkit
