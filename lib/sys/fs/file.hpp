// Regular files: whole-file reads and views, atomic durable replacement,
// exclusive creation, locked appends and locking for read-modify-write.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>

#include "sys/base/fd.hpp"
// a file is a name in a folder: callers of these get those helpers with them
#include "sys/fs/at_file.hpp"
#include "sys/fs/folder.hpp"
#include "sys/fs/link.hpp"

namespace loopkit {

// The file's bytes, or nullopt when it does not exist; "-" is stdin.
// A name ending in ".gz" is decompressed.
std::optional<std::string> read_file_if_exists(const std::string& path);
std::string read_file(const std::string& path);  // missing: exit 4

// open(path, O_RDONLY) for reading its bytes: an empty Fd when it does not
// exist; a folder, a device or a socket (refused before it is opened: a
// device has no end or can act when opened; a FIFO is read) or any other
// failure is exit 4. st receives its fstat. A
// link is followed by the rule of resolve_symlinks (not another user's link
// in a sticky world-writable folder).
Fd open_to_read(const std::string& path, struct stat& st);

// The rule for the files the tools write, lock or delete (lock files, saves,
// backups, temporary files): they are regular files, never reached through a
// symlink at their own name (folders on the way may be links), and a FIFO,
// device or socket there is refused at once, never read from or waited on.
// Readers of data (open_to_read) take whatever they are given, pipes too.
// (not_regular_reason and fail_not_regular in sys/base/error.hpp word the refusal.)

// An existing regular file opened read-only by the rule above: checked with
// lstat, opened with O_NOFOLLOW|O_NONBLOCK (so that a name swapped for a link
// or FIFO meanwhile is neither followed nor waited on) and checked again with
// fstat. An empty Fd when it does not exist; anything else that is not a
// regular file: exit 4. st receives its fstat.
Fd open_regular_nofollow(const std::string& path, struct stat& st, bool listed_regular = false);

// The same bytes, but a regular file is mapped rather than copied (a big
// state file is read without touching a page of heap per 4 KiB).
class FileView {
public:
  FileView() = default;
  FileView(FileView&& o) noexcept;
  FileView& operator=(FileView&& o) noexcept;
  ~FileView();
  std::string_view view() const { return map_ ? std::string_view(static_cast<const char*>(map_), len_) : owned_; }

private:
  friend FileView view_fd(int fd, const std::string& subject, const struct stat* known);
  std::string owned_;
  void* map_ = nullptr;
  std::size_t len_ = 0;
};
// the bytes of an open file (mapped when it is a regular file), as they are
// known: fd's stat, when the caller has it
FileView view_fd(int fd, const std::string& subject, const struct stat* known = nullptr);

struct AtomicWrite {
  mode_t mode = 0600;  // for a new file
  bool keep_existing_mode = true;
  bool sync = true;  // fsync the data and the folder
  // A failed fsync of the folder comes after the commit point: a warning
  // (warn), or exit 4 for a caller that undoes the change then (the lock
  // tools, under the folder's lock: undo_and_fail)
  enum FolderSyncFailure { warn, undo_and_fail } folder_sync_failure = warn;
  // true: a symlink at path is followed, and its final target replaced.
  // false: a symlink or any other non-regular file at path is refused
  // (exit 4), nothing written: see the rule above.
  bool follow_symlink = true;
  // with follow_symlink false: a symlink at path is replaced by the new file
  // (the link itself goes, its target is never touched) instead of refused
  bool replace_symlink = false;
  bool exclusive = false;  // fail with EEXIST when path already exists
  // only replace the file that path names: one deleted since (by a tool
  // that takes no lock, such as rm) is not brought back by the rename, and
  // the write returns false; the check and the replacement are one step
  // (renameat2 RENAME_EXCHANGE) where the file system has it
  bool only_if_present = false;
  // The file at path as its caller holds it (flocked by lock_for_replace,
  // which checked that the name stands for it): the name is not looked at
  // again, and the new file goes to held->at, through the folder it opened.
  const struct LockedForReplace* held = nullptr;
  // A second file that changes in the same commit, both or neither (a
  // document and its backup): put in place just before this file's rename,
  // and put back when that rename fails.
  class StagedReplacement* along = nullptr;
};

// A replacement of a file written and synced now, by the rules of
// write_file_atomic_with (how; not exclusive, not only_if_present), and put
// in place later by the write that names it as how.along. Until then the
// file is untouched; dropped unused, it leaves nothing.
class StagedReplacement {
public:
  // at: the file's name in its folder, open (a backup beside the document
  // read: held.at.sibling), which must outlive the StagedReplacement
  StagedReplacement(const AtFile& at, const AtomicWrite& how,
                    const std::function<void(int fd, const std::string& subject)>& fill);
  ~StagedReplacement();
  StagedReplacement(const StagedReplacement&) = delete;
  StagedReplacement& operator=(const StagedReplacement&) = delete;

private:
  friend bool write_file_atomic_with(const AtFile&, const AtomicWrite&,
                                     const std::function<void(int, const std::string&)>&);
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Write data to a temporary file beside path (a TempFile: sys/fs/tempfile.hpp),
// fsync it, rename it over path and fsync the folder: a reader sees the old
// or the new file, whole. The rename is the commit point: a failure before
// it leaves path and the folder as they were (exit 4); the folder's fsync
// after it is a warning (warn_system), and the call returns true. A FIFO,
// device or socket at the target is refused (exit 4), as is a folder.
// Returns true, or false when how.only_if_present and the file had gone
// (nothing written). With how.exclusive, the file is linked into place
// (link_new_file) and an existing name is exit 4 (EEXIST).
bool write_file_atomic(const std::string& path, std::string_view data, const AtomicWrite& how = {});
// The same, with the bytes written by fill to the temporary file's
// descriptor (so a big file is streamed, never held in memory); subject is
// the name fill's messages give. Not for how.exclusive.
bool write_file_atomic_with(const std::string& path, const AtomicWrite& how,
                            const std::function<void(int fd, const std::string& subject)>& fill);
// The same for a file already resolved (its folder open, at.shown() naming
// it in messages): a write of a file read through at, or of a name beside
// it, acts in that folder whatever its path names now. With how.held, at is
// not used (held->at is). A link at the name is followed or refused by how.
bool write_file_atomic(const AtFile& at, std::string_view data, const AtomicWrite& how = {});
bool write_file_atomic_with(const AtFile& at, const AtomicWrite& how,
                            const std::function<void(int fd, const std::string& subject)>& fill);

// Append with one write() on an O_APPEND descriptor under an exclusive flock,
// so that readers without the lock never see a torn entry; on failure the
// file is truncated back to its old size. The bytes are chosen under the
// lock from the file's size and its last tail_bytes (read with pread, so
// the cost does not grow with the file): of many first appenders exactly one sees size 0 and writes
// a header. The lock is taken on the inode that path still names (a rename
// by a rewriter holding the same flock is detected and retried). A file this
// call created is removed again when the write fails; an empty result writes
// nothing. A symlink is followed.
void append_locked_with(const std::string& path, size_t tail_bytes,
                        const std::function<std::string(off_t size, std::string_view tail)>& make, mode_t mode,
                        bool sync);

// A regular file or the folder it would go in, exclusively flocked for a
// read-modify-write. A symlink at path is followed (to a state file's one
// target); a FIFO, device or socket there, or at the link's target, is
// refused at once (exit 4), never opened for waiting. When the file exists, fd is it and it is still the inode
// that path names (a rename by the previous holder is detected and retried).
// When it does not, fd is its folder, locked, and the file is still absent.
// path is resolved once, into at: the lock, the look after it and the
// write that follows (how.held) all act in the folder it opened.
struct LockedForReplace {
  Fd fd;
  bool exists = false;
  FileView contents;  // when exists: valid while fd is held (writers rename, never rewrite in place)
  mode_t mode = 0;
  AtFile at;          // path with its links resolved: the name fd stands for, in its folder
  struct stat st {};  // when exists: fd's
};
// With view false, contents is left empty: the caller reads fd its own way
// (core/state/state.cpp maps it and releases the pages it has passed).
LockedForReplace lock_for_replace(const std::string& path, bool view = true);

// Create path holding data, atomically also on NFS, as liblockfile does: a
// temporary file (a TempFile, unnamed where the file system allows) is
// written and synced, then linked to path, which fails when path exists. The
// folder is not synced
// (the caller decides what a failure to do so means). Returns the new
// file's identity, or nullopt when path already exists; exit 4 otherwise,
// leaving neither path nor the temporary file.
std::optional<FileId> link_new_file(const std::string& path, std::string_view data, mode_t mode, bool sync = true);
// The same at a name already resolved (whose folder the caller then syncs)
std::optional<FileId> link_new_file(const AtFile& at, std::string_view data, mode_t mode, bool sync = true);

// A regular file's bytes (at most max_bytes of them) together with its
// modification time and identity, read from one open descriptor so they
// belong together; nullopt when it does not exist. The file is opened by the
// rule of open_regular_nofollow: a symlink, FIFO, device or socket at path
// is exit 4, never followed, read or waited on.
struct FileSnapshot {
  std::string data;
  int64_t mtime = 0;  // epoch seconds
  FileId id;
  bool too_big = false;  // longer than max_bytes: data holds the first max_bytes
};
// listed_regular: the folder listed path as a regular file just now
// (folder_entries), which stands for the lstat before the open
std::optional<FileSnapshot> read_file_snapshot(const std::string& path, size_t max_bytes = SIZE_MAX,
                                               bool listed_regular = false);

}  // namespace loopkit
