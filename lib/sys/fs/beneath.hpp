// Files named relative to a folder that never leave it (restoring files whose
// names come from data).
#pragma once
#include <string>
#include <string_view>
#include <sys/types.h>

namespace loopkit {

// A relative path of plain components: not absolute, no "..", no NUL, and
// naming a file (not ending in "/"). "." and empty components are allowed.
bool is_plain_relative(std::string_view rel);

// Write data to DIR/rel atomically (a TempFile beside it, fsync, rename),
// creating missing folders on the way with dir_mode. The folders are opened
// with openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it,
// else (or to create them) each relative to the one before with O_NOFOLLOW,
// so a symlink inside DIR (which could lead out of it) is refused, never
// followed: exit 4. The folder's fsync after the rename only warns. A rel that
// is not plain: exit 3. DIR itself is created if missing and may be a symlink.
void write_file_beneath(const std::string& dir, std::string_view rel, std::string_view data, mode_t file_mode = 0666,
                        mode_t dir_mode = 0777);

}  // namespace loopkit
