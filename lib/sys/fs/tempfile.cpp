#include "sys/fs/tempfile.hpp"

#include <cerrno>
#include <cstdio>  // renameat2
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/base/error.hpp"
#include "sys/fs/mapped.hpp"
#include "sys/proc/proc.hpp"
#include "sys/base/random.hpp"

namespace loopkit {

namespace {
constexpr std::size_t random_chars = 12;

// linkat() of an O_TMPFILE file goes through /proc/self/fd (AT_EMPTY_PATH
// needs CAP_DAC_READ_SEARCH); where /proc is missing, which the link itself
// tells, the written file is copied to a named one (copy_to_named)
bool g_unnamed_allowed = true;

std::string random_part() {
  static constexpr char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[random_chars];
  fill_random(bytes, sizeof bytes);
  std::string s;
  for (unsigned char b : bytes) s += alphabet[b % (sizeof alphabet - 1)];
  return s;
}

// What stands for target in its temporary names: target itself, unless
// ".TARGET.<random>.tmp" would be too long for a name (sys/fs/folder.hpp)
std::string stem_of(const std::string& target) { return name_stem(target, 1 + 1 + random_chars + 4); }

// ".STEM.<random_chars of the alphabet>.tmp"
bool is_random_temp_name(std::string_view name, std::string_view target) {
  const std::size_t want = 1 + target.size() + 1 + random_chars + 4;
  if (name.size() != want || name[0] != '.' || name.substr(1, target.size()) != target) return false;
  if (name[1 + target.size()] != '.' || name.substr(want - 4) != ".tmp") return false;
  for (char c : name.substr(2 + target.size(), random_chars))
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  return true;
}

bool names_inode(int dirfd, const std::string& name, int fd) {
  struct stat named, held;
  return fstatat(dirfd, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 && fstat(fd, &held) == 0 &&
         named.st_ino == held.st_ino && named.st_dev == held.st_dev;
}

// A stray of ours that no live writer holds (its flock went with it).
void remove_if_dead(int dirfd, const std::string& name) {
  struct stat st;
  if (fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != effective_uid())
    return;
  Fd f = open_fd_at(dirfd, name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (!f || flock(f.get(), LOCK_EX | LOCK_NB) != 0) return;
  if (names_inode(dirfd, name, f.get())) unlinkat(dirfd, name.c_str(), 0);
}
}  // namespace

void set_unnamed_temp_files(bool allowed) { g_unnamed_allowed = allowed; }

void remove_stray_temp_files(const Folder& folder, const std::string& target) {
  Fd d = open_fd_at(folder.fd(), ".", O_RDONLY | O_DIRECTORY);
  DIR* dp = d ? fdopendir(d.get()) : nullptr;
  if (!dp) return;  // best effort: the write itself does not depend on it
  d.release();
  const std::string stem = stem_of(target);
  while (struct dirent* e = readdir(dp))
    if (is_random_temp_name(e->d_name, stem)) remove_if_dead(folder.fd(), e->d_name);
  closedir(dp);
}

TempFile::TempFile(const Folder& folder, std::string target, bool exclusive, std::string subject)
    : folder_(folder), target_(std::move(target)), subject_(std::move(subject)) {
  if (subject_.empty()) subject_ = folder_.shown(target_);
  if (g_unnamed_allowed) {
    fd_ = open_fd_at(folder_.fd(), ".", O_RDWR | O_TMPFILE, 0600);
    if (fd_) return;
    // EISDIR: a kernel without O_TMPFILE; EOPNOTSUPP: a file system without
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) fail_system(errno, "create", subject_);
  }
  create_named(exclusive);
}

TempFile::~TempFile() { unstage(); }  // neither staged nor committed: only rolled back

void TempFile::rollback() noexcept {
  if (!name_.empty()) unlinkat(folder_.fd(), name_.c_str(), 0);
  name_.clear();
  fd_.reset();
}

// ".TARGET.tmp", ours to replace when we own it: replacements of one target
// are serialised by their callers, so one there is a killed writer's.
bool TempFile::take_own_stray(const std::string& name) {
  struct stat st;
  if (fstatat(folder_.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return errno == ENOENT;  // gone meanwhile: try the name again
  if (!S_ISREG(st.st_mode) || st.st_uid != effective_uid()) return false;
  return unlinkat(folder_.fd(), name.c_str(), 0) == 0 || errno == ENOENT;
}

void TempFile::create_named(bool exclusive) {
  const std::string fixed = "." + stem_of(target_) + ".tmp";
  for (int attempt = 0; !exclusive && attempt < 2; ++attempt) {
    fd_ = open_fd_at(folder_.fd(), fixed, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (fd_) {
      name_ = fixed;
      return;
    }
    if (errno != EEXIST) fail_system(errno, "create", folder_.shown(fixed));
    if (!take_own_stray(fixed)) break;
  }
  remove_stray_temp_files(folder_, target_);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string name = "." + stem_of(target_) + "." + random_part() + ".tmp";
    fd_ = open_fd_at(folder_.fd(), name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (!fd_ && errno == EEXIST) continue;
    if (!fd_) fail_system(errno, "create", folder_.shown(name));
    name_ = name;
    // held while we live, so that a sweep by another writer leaves it; one
    // that came between the open and the flock removes it: a new name.
    // Where nothing can be flocked (ENOLCK), no sweep can judge it either.
    const bool swept = flock(fd_.get(), LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!swept && names_inode(folder_.fd(), name_, fd_.get())) return;
    name_.clear();
  }
  fail_system(EEXIST, "create a temporary file for", subject_);
}

void TempFile::finish(mode_t mode, const struct stat* owner, bool sync) {
  if (fchmod(fd_.get(), mode) != 0) fail_system(errno, "set mode of", subject_);
  if (owner && effective_uid() == 0)
    (void)!fchown(fd_.get(), owner->st_uid, owner->st_gid);  // root editing a user's file keeps it theirs
  if (sync && fsync(fd_.get()) != 0) fail_system(errno, "sync", subject_);
  synced_ = sync;
}

// Without /proc the unnamed file cannot be linked: its bytes, mode and
// owner go to a named one, as if it had been named from the start.
void TempFile::copy_to_named(bool exclusive) {
  Fd unnamed = std::move(fd_);
  struct stat st;
  if (fstat(unnamed.get(), &st) != 0) fail_system(errno, "stat", subject_);
  create_named(exclusive);
  copy_range(unnamed.get(), 0, fd_.get(), static_cast<std::size_t>(st.st_size), subject_);
  finish(st.st_mode & 07777, &st, synced_);
}

// 1: linked; 0: name exists; -1: no /proc to link through
int TempFile::try_link_unnamed(const std::string& name) {
  // "/proc/self/fd/N" by hand: snprintf costs a state-set 700 instructions
  char proc[32] = "/proc/self/fd/";
  char digits[12];
  int n = 0;
  for (unsigned fd = static_cast<unsigned>(fd_.get()); n == 0 || fd != 0; fd /= 10) digits[n++] = char('0' + fd % 10);
  char* end = proc + sizeof "/proc/self/fd/" - 1;
  while (n > 0) *end++ = digits[--n];
  *end = '\0';
  if (linkat(AT_FDCWD, proc, folder_.fd(), name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 1;
  if (errno == EEXIST) return 0;
  const int err = errno;
  if (err == ENOENT && access("/proc/self/fd", X_OK) != 0) return -1;
  fail_system(err, "create", folder_.shown(name));
}

// The unnamed file gets the name a rename needs.
void TempFile::name_for_rename() {
  const std::string fixed = "." + stem_of(target_) + ".tmp";
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int linked = try_link_unnamed(fixed);
    if (linked < 0) {
      copy_to_named(false);  // the named file is at a name of its own
      return;
    }
    if (linked == 1) {
      name_ = fixed;
      return;
    }
    if (!take_own_stray(fixed)) break;
  }
  // held by another user's file or a link: a name nobody can guess
  remove_stray_temp_files(folder_, target_);
  if (flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) fail_system(errno, "lock", subject_);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = "." + stem_of(target_) + "." + random_part() + ".tmp";
    if (try_link_unnamed(name) == 1) {
      name_ = std::move(name);
      return;
    }
  }
  fail_system(EEXIST, "create a temporary file for", subject_);
}

void TempFile::close_after_commit() {
  if (!name_.empty() && unlinkat(folder_.fd(), name_.c_str(), 0) != 0 && errno != ENOENT)
    warn_system(errno, "remove", folder_.shown(name_));
  name_.clear();
  try {
    fd_.close(subject_);
  } catch (const Error& e) {
    warn(e.what());
  }
}

bool TempFile::link_new() {
  if (name_.empty()) {
    const int linked = try_link_unnamed(target_);
    if (linked == 0) return false;
    if (linked == 1) {
      close_after_commit();
      return true;
    }
    copy_to_named(true);
  }
  if (linkat(folder_.fd(), name_.c_str(), folder_.fd(), target_.c_str(), 0) != 0) {
    int err = errno;
    // NFS may report failure for a link that was made (liblockfile's check)
    struct stat st;
    if (fstat(fd_.get(), &st) != 0 || st.st_nlink != 2) {
      rollback();
      if (err == EEXIST) return false;
      fail_system(err, "create", subject_);
    }
  }
  close_after_commit();
  return true;
}

bool TempFile::rename_over(bool only_if_present) {
  if (name_.empty()) name_for_rename();
  const int dir = folder_.fd();
  if (only_if_present) {
    // exchanging fails with ENOENT, changing nothing, when target has gone;
    // otherwise the old file is left at our name, removed with it
    if (renameat2(dir, name_.c_str(), dir, target_.c_str(), RENAME_EXCHANGE) == 0) {
      close_after_commit();
      return true;
    }
    struct stat st;
    bool cannot_exchange = errno == EINVAL || errno == ENOSYS;
    // where the file system cannot exchange, a look just before the rename
    // narrows the window
    if (errno == ENOENT ||
        (cannot_exchange && fstatat(dir, target_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)) {
      rollback();
      return false;
    }
  }
  if (renameat(dir, name_.c_str(), dir, target_.c_str()) != 0) {
    int err = errno;
    std::string what = folder_.shown(name_) + "' to '" + subject_;
    rollback();
    fail_system(err, "rename", what);
  }
  name_.clear();  // it is the target's name now
  close_after_commit();
  return true;
}

void TempFile::stage() {
  if (name_.empty()) name_for_rename();
  const int dir = folder_.fd();
  if (renameat2(dir, name_.c_str(), dir, target_.c_str(), RENAME_EXCHANGE) == 0) {
    staged_ = Staged::exchanged;  // the old file is at name_ now
    return;
  }
  if (errno != ENOENT && errno != EINVAL && errno != ENOSYS) {
    const int err = errno;
    std::string what = folder_.shown(name_) + "' to '" + subject_;
    rollback();
    fail_system(err, "rename", what);
  }
  staged_ = errno == ENOENT ? Staged::created : Staged::renamed;
  if (renameat(dir, name_.c_str(), dir, target_.c_str()) != 0) {
    const int err = errno;
    std::string what = folder_.shown(name_) + "' to '" + subject_;
    staged_ = Staged::no;
    rollback();
    fail_system(err, "rename", what);
  }
  name_.clear();  // it is the target's name now
}

void TempFile::settle() {
  staged_ = Staged::no;
  close_after_commit();  // an exchanged old file goes with our name
}

void TempFile::unstage() noexcept {
  const int dir = folder_.fd();
  if (staged_ == Staged::exchanged) {
    if (renameat2(dir, name_.c_str(), dir, target_.c_str(), RENAME_EXCHANGE) != 0) name_.clear();  // keep both
  } else if (staged_ == Staged::created && names_inode(dir, target_, fd_.get())) {
    unlinkat(dir, target_.c_str(), 0);
  }
  staged_ = Staged::no;
  rollback();
}

}  // namespace loopkit
