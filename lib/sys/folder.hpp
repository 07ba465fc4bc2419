// Folders as sets of names, and the folder-wide flock that serialises every
// change to an existing name in one folder (the lock tools rely on it).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sys/fd.hpp"

namespace loopkit {

// An exclusive flock on the folder itself, held until the Fd is closed.
// Waits for other holders; exit 4 when the folder cannot be opened or locked.
Fd lock_folder(const std::string& dir);

// The names in a folder that end in suffix (dot files excluded), sorted.
std::vector<std::string> list_folder(const std::string& dir, const std::string& suffix);
bool is_folder(const std::string& path);  // follows symlinks

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
