// The one way a file is written before it takes its name, as git's
// tempfile/lockfile: create, then commit (link or rename into place) or roll
// back, on every path. The contract's promise "exit 4 means unchanged" lives
// here: what fails before the commit point leaves nothing behind; what fails
// after it (closing, removing the old file an exchange left behind) is a
// warning, never an error.
#pragma once
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

#include "sys/base/fd.hpp"
#include "sys/fs/folder.hpp"

namespace loopkit {

// A new file in folder that is to become folder/target.
//
// Where the file system has O_TMPFILE, the file has no name until it is
// committed: a writer killed at any point leaves nothing, and nobody can
// guess, pre-create or plant a link at its name. An exclusive commit links
// it straight to target; a replacing one links it to ".TARGET.tmp" and
// renames that over target, so that only the two system calls between them
// see a name.
//
// Elsewhere (NFS, some FUSE file systems) it is created by name from the
// start: ".TARGET.tmp" for a replacement (callers serialise replacements of
// one target with a lock, so a file there that we own is a stray of a killed
// writer, removed before use), else ".TARGET.XXXXXXXXXXXX.tmp", a random name,
// flocked while its writer lives.
//
// How strays never outlive the next run: one at ".TARGET.tmp" is ours to
// replace, and the next write of target does. When that name is held by a
// file that is not ours to remove (another user's, in a shared folder, or a
// link), a random name is used instead, and the same run removes every
// ".TARGET.*.tmp" that we own and that no live writer holds a flock on. The
// sweep reads the folder, so it happens only then and when a named temporary
// file is created for an exclusive commit (where O_TMPFILE is missing):
// never on the common path.
//
// TARGET in these names is name_stem(target) (sys/fs/folder.hpp): a target too
// long to take the 18 bytes more (names of up to 255 bytes are legal) is
// cut and ended by a hash of the whole name, so that every temporary name fits.
class TempFile {
public:
  // exclusive: for link_new (a named file then gets a random name, as
  // creators are not serialised), else for rename_over
  // subject: the name messages use (the caller's path), else folder/target
  TempFile(const Folder& folder, std::string target, bool exclusive, std::string subject = {});
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();  // rolls back what was not committed

  int fd() const { return fd_.get(); }
  // the name used in messages: the target's path, as the caller gave it
  const std::string& subject() const { return subject_; }

  // mode and, for root, owner (root editing a user's file keeps it theirs),
  // then fsync when sync
  void finish(mode_t mode, const struct stat* owner, bool sync);

  // The commit points. link_new: target created holding our file, atomically
  // also on NFS; false, nothing changed, when target already exists.
  bool link_new();
  // rename over target; with only_if_present, false (nothing changed) when
  // target has gone since the caller read it: the check and the rename are
  // one step (renameat2 RENAME_EXCHANGE) where the file system has it.
  bool rename_over(bool only_if_present);

  // A commit in two halves, for a file that changes together with another
  // (a backup and the file it backs up: both or neither). stage() puts our
  // file at target and keeps what target held, at our temporary name where
  // the file system can exchange names (renameat2 RENAME_EXCHANGE); then
  // either settle() (the other file's commit was made: the old one goes)
  // or unstage() (it failed: the old file is put back, or a target that
  // did not exist removed again). Without exchange, stage() is a plain
  // rename and unstage() can undo nothing.
  void stage();
  void settle();
  void unstage() noexcept;

private:
  void create_named(bool exclusive);
  int try_link_unnamed(const std::string& name);
  void copy_to_named(bool exclusive);
  void name_for_rename();
  bool take_own_stray(const std::string& name);
  void close_after_commit();
  void rollback() noexcept;

  const Folder& folder_;
  std::string target_;
  std::string subject_;
  Fd fd_;
  std::string name_;     // the temporary name, while there is one
  bool synced_ = false;  // finish was asked to fsync
  enum class Staged { no, exchanged, created, renamed } staged_ = Staged::no;
};

// false: every TempFile is named, as where O_TMPFILE is missing (for the
// tests of that path; file systems without it are not at hand)
void set_unnamed_temp_files(bool allowed);

// The stray sweep above, for ".TARGET.*.tmp" in folder.
void remove_stray_temp_files(const Folder& folder, const std::string& target);

}  // namespace loopkit
