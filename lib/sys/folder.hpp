// Folders: names of paths, creating and syncing folders, listing them, and
// the folder-wide flock that serialises every change to an existing name in
// one folder (the lock tools rely on it).
#pragma once
#include <string>
#include <sys/types.h>
#include <vector>

#include "sys/fd.hpp"

namespace loopkit {

// The folder part of a path ("." when none) and the last component.
std::string dir_name(const std::string& path);
std::string base_name(const std::string& path);

// mkdir -p; new folders get mode
void make_dirs(const std::string& path, mode_t mode = 0755);
// fsync(2) of the folder, so that a rename or link in it survives a crash
void fsync_dir(const std::string& dir);
bool is_folder(const std::string& path);  // follows symlinks

// The names in a folder that end in suffix (dot files excluded), sorted.
std::vector<std::string> list_folder(const std::string& dir, const std::string& suffix);
// The names of the regular files (lstat: symlinks excluded) directly in dir
// that the calling user owns, sorted; a missing dir has none.
std::vector<std::string> own_regular_files(const std::string& dir);

// An exclusive flock on the folder itself, held until the Fd is closed.
// Waits for other holders; exit 4 when the folder cannot be opened or locked.
// Where folders cannot be flocked (NFS), the guard file .loopkit-folder-lock
// in it is locked instead; a link or special file there is refused (exit 4).
Fd lock_folder(const std::string& dir);

}  // namespace loopkit
