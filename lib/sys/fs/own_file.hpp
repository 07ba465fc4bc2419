// One name asked what own_regular_files (sys/fs/folder.hpp) asks of every name
// in a folder and of the folder, for a caller that lists names first
// (list_folder) and looks only at those it tries (ctx-resume: the newest
// save, nearly always).
#pragma once
#include <string>

namespace loopkit {

// Whether path names a regular file (lstat: a symbolic link is not one) that
// the effective user owns. Anything else, a missing name included, is false.
bool is_own_regular_file(const std::string& path);

// Whether opening path would find nothing (ENOENT, links followed: a
// dangling link names nothing), as own_regular_files tells a missing folder.
bool names_nothing(const std::string& path);

}  // namespace loopkit
