// Folders as sets of names, and the folder-wide flock that serialises every
// change to an existing name in one folder (the lock tools rely on it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "sys/fd.hpp"

namespace loopkit {

// An exclusive flock on the folder itself, held until the Fd is closed.
// Waits for other holders; exit 4 when the folder cannot be opened or locked.
// Where folders cannot be flocked (NFS), the guard file .loopkit-folder-lock
// in it is locked instead; a link or special file there is refused (exit 4).
Fd lock_folder(const std::string& dir);

// The names in a folder that end in suffix (dot files excluded), sorted.
std::vector<std::string> list_folder(const std::string& dir, const std::string& suffix);
bool is_folder(const std::string& path);  // follows symlinks

// Which file a name stands for: device and inode.
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  bool operator==(const FileId&) const = default;
};
std::optional<FileId> file_id(const std::string& path);  // lstat; nullopt if missing

// Create path holding data, atomically also on NFS, as liblockfile does: a
// temporary file named after path and our pid is written and synced, then
// link()ed to path, which fails when path exists. The folder is not synced
// (the caller decides what a failure to do so means). Returns the new
// file's identity, or nullopt when path already exists; exit 4 otherwise,
// leaving neither path nor the temporary file.
std::optional<FileId> link_new_file(const std::string& path, std::string_view data, mode_t mode);

// unlink(2): true if removed, false if it was already gone; exit 4 otherwise.
bool remove_file(const std::string& path);

// unlink(2) of path only if the name still stands for the regular file id
// (lstat, so a link is never followed): what was checked is what goes. A
// name since replaced (by a link, say) is left alone: `changed`. Exit 4 on
// other errors. Callers hold the folder's lock, so that between the check
// and the unlink only processes that ignore that lock can change the name.
enum class Removal { removed, missing, changed };
Removal remove_file_if_same(const std::string& path, const FileId& id);

// A regular file's bytes (at most max_bytes of them) together with its
// modification time and identity, read from one open descriptor so they
// belong together; nullopt when it does not exist. The file is opened by the
// rule of open_regular_nofollow (sys/file.hpp): a symlink, FIFO, device or
// socket at path is exit 4, never followed, read or waited on.
struct FileSnapshot {
  std::string data;
  int64_t mtime = 0;       // epoch seconds
  FileId id;
  bool too_big = false;    // longer than max_bytes: data holds the first max_bytes
};
std::optional<FileSnapshot> read_file_snapshot(const std::string& path, size_t max_bytes = SIZE_MAX);

}  // namespace loopkit
