// A file named once: the folder a path leads to, open, and the last name in
// it, as Go's os.Root and git's struct lock_file hold a file that is to be
// replaced. A writer resolves its operand into one at the start of a call
// (the folder opened once, a link at the name followed by the rule of
// resolve_symlinks); every later look at the name, open, lock, temporary
// file, rename and fsync of the folder goes through that one descriptor. A
// folder on the way that is renamed or replaced meanwhile (a symlink
// planted in its place) does not send the rest of the call elsewhere: the
// call ends in the folder it resolved, beside the file it read.
//
// The calling sequence of a replacement:
//   AtFile at(path);                  // or lock_for_replace(path).at
//   TempFile tmp = at.temp_file();    // beside the name, unnamed where it can be
//   ... write tmp.fd(), tmp.finish(mode, owner, sync) ...
//   at.commit_sync(tmp, {});          // rename over the name, fsync the folder
// A TempFile not committed rolls back when it goes; it must not outlive at.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <sys/stat.h>

#include "sys/base/fd.hpp"
#include "sys/fs/folder.hpp"
#include "sys/fs/tempfile.hpp"

namespace loopkit {

class AtFile {
public:
  // No file yet: the working folder and no name (a lock not yet taken).
  AtFile() : folder_(Fd(), ".") {}
  // path's folder opened (links on the way to it followed: the caller's
  // layout; "." is the working folder, opened for nothing) and path's last
  // component. The name itself is not looked at: a link there is the
  // caller's to follow (following_links) or refuse. A folder that cannot be
  // opened is no error yet: each look and open fails as it would on the
  // path (errno from opening the folder), and a write fails as "cannot open
  // folder 'DIR'"; a folder that can be searched but not read (mode --x)
  // is held for looks and opens alone.
  explicit AtFile(const std::string& path);
  // The file at the end of the links at path, by the rule of
  // resolve_symlinks (another user's link in a sticky world-writable
  // folder is exit 4); named shown (else path) in messages.
  static AtFile following_links(const std::string& path, std::string shown = {});
  AtFile(AtFile&&) noexcept = default;
  AtFile& operator=(AtFile&&) noexcept = default;

  // The folder, for the *at() calls of a write (exit 4 when it could not
  // be opened for reading: as "cannot open folder 'DIR'")
  const Folder& folder() const;
  const std::string& name() const { return name_; }
  // the folder's path as it was opened, for messages
  const std::string& folder_path() const { return folder_.path(); }
  // where it is, links resolved; and the name the caller gave, for messages
  const std::string& path() const { return path_; }
  const std::string& shown() const { return shown_.empty() ? path_ : shown_; }

  // fstatat(2) of the name: lstat, or stat with follow; false, errno set,
  // when that fails
  bool look(struct stat& st, bool follow = false) const;
  // openat(2) of the name; an empty Fd, errno set, when that fails
  Fd open(int flags, unsigned mode = 0) const;
  // whether the name exists (faccessat(2), links followed)
  bool exists() const;
  // the folder opened anew for reading, to flock it (a missing file's
  // read-modify-write locks the folder it would go in); an empty Fd, errno
  // set, when that fails
  Fd open_folder() const;
  // Another name in the same folder, borrowing this one's descriptor:
  // valid while *this lives. Its path is path()'s folder and name; shown,
  // when given, names it in messages.
  AtFile sibling(const std::string& name, std::string shown = {}) const;
  // The same file through the same descriptor, borrowed as sibling is.
  AtFile borrowed() const;

  // A temporary file beside the name (sys/fs/tempfile.hpp), named shown()
  // in messages: exclusive for link_new, else for commit_sync.
  TempFile temp_file(bool exclusive = false) const { return TempFile(folder(), name_, exclusive, shown()); }

  struct Commit {
    bool only_if_present = false;      // TempFile::rename_over's
    bool sync = true;                  // fsync the folder after the rename
    bool fail_on_folder_sync = false;  // exit 4, not a warning (the caller undoes)
    // a second file that changes with this one, both or neither (a backup):
    // staged at its name just before the rename, put back when it fails
    TempFile* along = nullptr;
  };
  // The commit point of a replacement: tmp (this handle's temp_file)
  // renamed over the name, then the folder fsynced. Before the rename a
  // failure changes nothing (exit 4); the fsync after it only warns unless
  // how.fail_on_folder_sync. false: how.only_if_present and the name had
  // gone (nothing changed).
  bool commit_sync(TempFile& tmp, const Commit& how) const;

private:
  AtFile(Folder folder, std::string name, std::string path, std::string shown)
      : folder_(std::move(folder)), name_(std::move(name)), path_(std::move(path)), shown_(std::move(shown)) {}
  AtFile(const std::string& dir, const std::string& path);
  // false, errno set to why, when the folder could not be opened at all
  bool can_look() const;
  void sync_folder(const Commit& how) const;

  // 0, or why the folder could not be opened for reading (errno): then
  // folder_ is searchable only (O_PATH) or, searchable_ false, not open
  // (first: the opening of folder_ sets them)
  int folder_errno_ = 0;
  bool searchable_ = true;
  Folder folder_;
  std::string name_;
  std::string path_;
  std::string shown_;  // when it is not path_
};

}  // namespace loopkit
