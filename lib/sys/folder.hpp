// Folders as sets of names, and the folder-wide flock that serialises every
// change to an existing name in one folder (the lock tools rely on it).
#pragma once
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

// A file's bytes together with its modification time, read from one open
// descriptor so the two belong together; nullopt when it does not exist.
struct FileSnapshot {
  std::string data;
  int64_t mtime = 0;  // epoch seconds
};
std::optional<FileSnapshot> read_file_snapshot(const std::string& path);

}  // namespace loopkit
