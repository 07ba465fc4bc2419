// One reader of files that grow by appends, for progress files (entries
// closed by a "---" line) and event logs (one event a line): what a look
// sees is settled (no append in flight), and a follower passes records on
// whole, across a file put in place (a rotation, a --pattern rewrite) or
// truncated. Internal to core/log/progress_show.cpp and core/log/event.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "sys/base/fd.hpp"

namespace loopkit::growing {

// Bytes of the file at [offset, offset + n), fewer at the end of the look.
using ReadAt = std::function<std::string(uint64_t offset, std::size_t n)>;

// A regular file as one look sees it. The size is taken under a shared
// flock, so no append is in flight at it (an appender writes each record
// with one write() under an exclusive flock: append_locked_with), and the
// bytes before it never change: appends only add, a failed append truncates
// back to where it began, and a rewrite renames a new file in and leaves
// this one alone. The lock is held for the fstat only: a slow reader (a
// pager on stdout) never holds up the appenders. Dropping an unterminated
// last record instead would hide one written by hand without its end, and
// would still show a record whose write is later taken back.
struct Look {
  Fd fd;
  ino_t inode = 0;
  uint64_t size = 0;
  ReadAt read;  // never past size: bytes beyond it may be half written
};
// The file at fd (of that inode) as it is now.
Look look_at(Fd fd, ino_t inode, const std::string& path);
// path as it is now; nullopt when it is missing or not a regular file (a
// log rotated away, its successor not there yet).
std::optional<Look> look(const std::string& path);
// For --follow: path must be a FILE, not "-" or a .gz file (exit 2); its
// first look, nullopt when missing; a file that is not regular is exit 2.
std::optional<Look> first_look(const std::string& path);

// The records of one kind of file.
struct Records {
  // where they begin in a file as a look sees it (after a progress file's
  // head; 0 for a log)
  std::function<uint64_t(const Look&)> start;
  // where the first whole record of text ends (after its end mark), or npos
  std::function<std::size_t(std::string_view)> first_end;
};
using OnRecord = std::function<void(std::string_view record, uint64_t offset)>;

// Follows path after a first look whose records up to offset seen_to the
// caller has shown: until SIGINT, SIGTERM or SIGHUP, every poll seconds,
// each record appended is passed to on_record once it is whole, with its
// offset in the file. A file put in place (another inode) goes on after
// the records seen when it holds them where they were (a progress file
// rewritten with a new head); else it, and a file truncated below them,
// are read from their first record, after a call of on_restart.
void follow(const std::string& path, const Look& first, uint64_t seen_to, const Records& records, double poll,
            const OnRecord& on_record, const std::function<void()>& on_restart);

}  // namespace loopkit::growing
