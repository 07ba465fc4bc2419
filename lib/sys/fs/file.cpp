#include "sys/fs/file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "sys/base/error.hpp"
#include "sys/fs/flock.hpp"
#include "sys/fs/folder.hpp"
#include "sys/fs/link.hpp"
#include "sys/gz/gz.hpp"
#include "sys/fs/tempfile.hpp"

namespace loopkit {

Fd open_regular_nofollow(const std::string& path, struct stat& st, bool listed_regular) {
  // lstat first, so that a device is refused without being opened at all
  // (opening one can have effects), unless a listing of the folder said
  // what it is; the open and fstat catch a name swapped in between.
  if (!listed_regular && lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Fd();
    fail_system(errno, "open", path);
  }
  if (!listed_regular && !S_ISREG(st.st_mode)) fail_not_regular("open", path, st.st_mode);
  Fd fd = open_fd(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (!fd) {
    int err = errno;
    if (err == ENOENT) return fd;  // removed since the lstat
    struct stat now;
    if (lstat(path.c_str(), &now) == 0 && !S_ISREG(now.st_mode)) fail_not_regular("open", path, now.st_mode);
    fail_system(err, "open", path);
  }
  if (fstat(fd.get(), &st) != 0) fail_system(errno, "stat", path);
  if (!S_ISREG(st.st_mode)) fail_not_regular("open", path, st.st_mode);
  return fd;
}

namespace {
// For writers that follow links (state and progress files): a FIFO, device
// or socket at path, or behind it, is refused before it is opened (opening
// one can block or have effects).
// shown: the name the caller gave, when path is what its links resolve to.
void refuse_special_file(const std::string& path, std::string_view verb, std::string_view shown = {}) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
    fail_not_regular(verb, shown.empty() ? std::string_view(path) : shown, st.st_mode);
}
}  // namespace

namespace {
// What a reader refuses at once: a device, which may have no end
// (/dev/zero) or act when opened (a tape rewinds), but /dev/null, which
// reads as empty; and a socket. A FIFO is read: state-get <(cmd) PATH.
bool unreadable_kind(const struct stat& st) {
  return ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !is_null_device(st)) || S_ISSOCK(st.st_mode);
}
}  // namespace

Fd open_to_read(const std::string& path, struct stat& st) {
  // checked before the open, which a device must never see
  if (stat(path.c_str(), &st) == 0 && unreadable_kind(st)) fail_not_regular("open", path, st.st_mode);
  // O_NOFOLLOW first: a name that is no link (nearly all) costs nothing
  // more; a link is checked by the rule for shared folders, then followed
  Fd fd = open_fd(path, O_RDONLY | O_NOCTTY | O_NOFOLLOW);
  if (!fd && errno == ELOOP) {
    (void)resolve_symlinks(path);
    fd = open_fd(path, O_RDONLY | O_NOCTTY);
  }
  if (!fd) {
    if (errno == ENOENT) return fd;
    fail_system(errno, "open", path);
  }
  if (fstat(fd.get(), &st) != 0) fail_system(errno, "stat", path);
  if (S_ISDIR(st.st_mode)) fail_system(EISDIR, "read", path);
  if (unreadable_kind(st)) fail_not_regular("open", path, st.st_mode);  // swapped in since the stat
  return fd;
}

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::string data;
  if (path == "-") {
    data = read_all(0, "standard input");
  } else {
    struct stat st;
    Fd fd = open_to_read(path, st);
    if (!fd) return std::nullopt;
    data = read_all(fd.get(), path);
  }
  if (is_gzip(data, path)) data = gunzip(data, path);
  return data;
}

std::string read_file(const std::string& path) {
  auto d = read_file_if_exists(path);
  if (!d) fail_system(ENOENT, "open", path);
  return std::move(*d);
}

FileView::FileView(FileView&& o) noexcept
    : owned_(std::move(o.owned_)), map_(std::exchange(o.map_, nullptr)), len_(o.len_) {}

FileView& FileView::operator=(FileView&& o) noexcept {
  if (this != &o) {
    if (map_) munmap(map_, len_);
    owned_ = std::move(o.owned_);
    map_ = std::exchange(o.map_, nullptr);
    len_ = o.len_;
  }
  return *this;
}

FileView::~FileView() {
  if (map_) munmap(map_, len_);
}

FileView view_fd(int fd, const std::string& subject, const struct stat* known) {
  FileView v;
  struct stat st;
  if (known) st = *known;
  else if (fstat(fd, &st) != 0) fail_system(errno, "stat", subject);
  // a small file is read whole: one pread where a map costs mmap and munmap
  constexpr off_t small = 16384;
  if (S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < small) {
    v.owned_ = read_regular_up_to(fd, SIZE_MAX, st.st_size, subject);
    return v;
  }
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (m != MAP_FAILED) {
      v.map_ = m;
      v.len_ = static_cast<size_t>(st.st_size);
      return v;
    }
  }
  v.owned_ = read_all(fd, subject);
  return v;
}

namespace {
void sync_folder(const Folder& folder, const AtomicWrite& how) {
  if (how.folder_sync_failure == AtomicWrite::undo_and_fail) folder.sync();
  else folder.sync_after_commit();
}

// The exclusive creation of link_new_file; the folder is not synced.
std::optional<FileId> link_new_in(const Folder& folder, const std::string& name, std::string_view data, mode_t mode,
                                  bool sync, const std::string& shown) {
  TempFile tmp(folder, name, true, shown);
  write_all(tmp.fd(), data, tmp.subject());
  tmp.finish(mode, nullptr, sync);
  struct stat st;
  if (fstat(tmp.fd(), &st) != 0) fail_system(errno, "stat", shown);
  if (!tmp.link_new()) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}
}  // namespace

namespace {
// The exclusive write, at the name at (its links resolved as how asks)
bool write_new_file(const AtFile& at, std::string_view data, const AtomicWrite& how) {
  const Folder& folder = at.folder();
  struct stat st;
  // link() fails if the name was taken meanwhile; rename() would replace it
  if (at.look(st) || !link_new_in(folder, at.name(), data, how.mode, how.sync, at.shown()))
    fail_system(EEXIST, "create", at.shown());
  if (how.sync) sync_folder(folder, how);
  return true;
}
}  // namespace

bool write_file_atomic(const std::string& path, std::string_view data, const AtomicWrite& how) {
  if (!how.exclusive)
    return write_file_atomic_with(path, how, [&](int fd, const std::string& tmp) { write_all(fd, data, tmp); });
  return write_new_file(how.follow_symlink ? AtFile::following_links(path) : AtFile(path), data, how);
}

bool write_file_atomic(const AtFile& at, std::string_view data, const AtomicWrite& how) {
  if (!how.exclusive)
    return write_file_atomic_with(at, how, [&](int fd, const std::string& tmp) { write_all(fd, data, tmp); });
  if (!how.follow_symlink) return write_new_file(at, data, how);
  return write_new_file(AtFile::following_links(at.path(), at.shown()), data, how);
}

namespace {
// The refusals of what is at the target now (st, from lstat).
void check_replaceable(const std::string& path, const AtomicWrite& how, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) fail_system(EISDIR, "replace", path);
  // rename() would never write through a link or into a FIFO, but the rule
  // is that such a name is not ours to replace (a link planted in a shared
  // folder stays for its owner to see); only a caller that asks replaces a link
  if (!S_ISREG(st.st_mode) && !(S_ISLNK(st.st_mode) && how.replace_symlink && !how.follow_symlink))
    fail_not_regular("replace", path, st.st_mode);
}

// Where given's replacement goes (given itself, held's file, or the target
// of a link at given's name) and what is there now. The name is looked at
// first: a regular file there (nearly always) is no link, so nothing needs
// resolving; a link is resolved when how follows links. Made in place: at
// points into it or to what the caller keeps.
struct Replaced {
  std::optional<AtFile> target;  // a link's, when one was followed
  const AtFile* at;
  bool existed = true;
  struct stat st;
  Replaced(const AtFile& given, const AtomicWrite& how);
  Replaced(const Replaced&) = delete;
  Replaced& operator=(const Replaced&) = delete;
};
Replaced::Replaced(const AtFile& given, const AtomicWrite& how) : at(how.held ? &how.held->at : &given) {
  if (how.held) {
    st = how.held->st;
    return;
  }
  (void)given.folder();  // one that could not be opened fails here, before any look
  existed = given.look(st);
  if (existed && S_ISLNK(st.st_mode) && how.follow_symlink) {
    at = &target.emplace(AtFile::following_links(given.path(), given.shown()));
    existed = at->look(st);
  }
  if (existed) check_replaceable(given.shown(), how, st);
}
}  // namespace

namespace {
void fill_replacement(TempFile& tmp, const Replaced& r, const AtomicWrite& how,
                      const std::function<void(int fd, const std::string& tmp)>& fill) {
  const bool regular = r.existed && S_ISREG(r.st.st_mode);
  fill(tmp.fd(), tmp.subject());
  tmp.finish(regular && how.keep_existing_mode ? r.st.st_mode & 07777 : how.mode, regular ? &r.st : nullptr, how.sync);
}
}  // namespace

struct StagedReplacement::Parts {
  AtFile given;  // the caller's, borrowed: it may be a temporary
  Replaced r;
  TempFile tmp;
  bool sync;
  Parts(const AtFile& at, const AtomicWrite& how)
      : given(at.borrowed()), r(given, how), tmp(r.at->temp_file()), sync(how.sync) {}
};

StagedReplacement::StagedReplacement(const AtFile& at, const AtomicWrite& how,
                                     const std::function<void(int fd, const std::string& subject)>& fill) {
  if (how.exclusive || how.only_if_present || how.along) fail_system(EINVAL, "replace", at.shown());
  parts_ = std::make_unique<Parts>(at, how);
  fill_replacement(parts_->tmp, parts_->r, how, fill);
}

StagedReplacement::~StagedReplacement() = default;

bool write_file_atomic_with(const std::string& path, const AtomicWrite& how,
                            const std::function<void(int fd, const std::string& tmp)>& fill) {
  // held: the file was resolved when it was locked, and is written there
  if (how.held) return write_file_atomic_with(how.held->at, how, fill);
  return write_file_atomic_with(AtFile(path), how, fill);
}

bool write_file_atomic_with(const AtFile& at, const AtomicWrite& how,
                            const std::function<void(int fd, const std::string& tmp)>& fill) {
  if (how.exclusive) fail_system(EINVAL, "create", at.shown());
  const Replaced r(at, how);
  if (!r.existed && how.only_if_present) return false;
  TempFile tmp = r.at->temp_file();
  fill_replacement(tmp, r, how, fill);
  StagedReplacement::Parts* along = how.along ? how.along->parts_.get() : nullptr;
  const bool fail_on_sync = how.folder_sync_failure == AtomicWrite::undo_and_fail;
  if (!r.at->commit_sync(tmp, {.only_if_present = how.only_if_present,
                               .sync = how.sync,
                               .fail_on_folder_sync = fail_on_sync,
                               .along = along ? &along->tmp : nullptr}))
    return false;
  if (along && along->sync) along->r.at->folder().sync_after_commit();
  return true;
}

namespace {
// target (path with its links resolved) opened for appending, created when
// missing (created says so); an empty Fd when the name changed meanwhile
// (a link swapped in, a racing creator): look again.
Fd open_for_append(const std::string& target, const std::string& path, int access, mode_t mode, bool& created) {
  created = false;
  refuse_special_file(target, "append to", path);
  const int flags = access | O_APPEND | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
  Fd fd = open_fd(target, flags);
  if (!fd && errno == ENOENT) {
    // O_EXCL tells us whether this call made the file, so a failed first
    // write can take the file away again instead of leaving it empty
    fd = open_fd(target, flags | O_CREAT | O_EXCL, mode);
    if (!fd && errno == EEXIST) return fd;
    created = static_cast<bool>(fd);
  }
  if (!fd) {
    int err = errno;
    if (err == ELOOP) return fd;
    refuse_special_file(target, "append to", path);  // swapped in meanwhile (a FIFO without reader: ENXIO)
    fail_system(err, "open", path);
  }
  struct stat held;
  if (fstat(fd.get(), &held) != 0) fail_system(errno, "stat", path);
  if (S_ISDIR(held.st_mode)) fail_system(EISDIR, "append to", path);
  if (!S_ISREG(held.st_mode)) fail_not_regular("append to", path, held.st_mode);
  return fd;
}

using MakeAppend = std::function<std::string(off_t size, std::string_view tail)>;

// The file this call created, removed by its name only while the name still
// stands for it: between the create and now another process may have put
// its own file there (a rename over it), which is not ours to remove. On a
// way out already failing, or after the commit: a failure here is a warning.
void remove_created(const Fd& fd, const std::string& target) noexcept {
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return;
  try {
    (void)remove_file_if_same(target, FileId{st.st_dev, st.st_ino});
  } catch (const Error& e) {
    warn(e.what());
  }
}

// The append itself, on fd locked and still named by target, size bytes long.
void append_held(Fd& fd, const std::string& target, const std::string& path, off_t size, bool created,
                 size_t tail_bytes, const MakeAppend& make, bool sync) {
  std::string tail;
  if (tail_bytes > 0 && size > 0) {
    size_t n = static_cast<size_t>(std::min<off_t>(size, static_cast<off_t>(tail_bytes)));
    tail = read_at(fd.get(), size - static_cast<off_t>(n), n, path);
  }
  const std::string data = make(size, tail);
  // only a file that was empty when we locked it is ours to remove; a
  // racing appender may have filled the one we created before we locked it
  const bool remove_on_failure = created && size == 0;
  auto undo = [&] {
    if (remove_on_failure) remove_created(fd, target);
    else (void)!ftruncate(fd.get(), size);
  };
  // one write() so that readers without the lock never see a torn entry;
  // a short one (the disk, a quota or ulimit -f reached part-way) goes on
  // only to learn why, and is undone
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : ENOSPC;
      undo();
      fail_system(err, "append to", path);
    }
    done += static_cast<size_t>(n);
  }
  if (sync && !data.empty() && fsync(fd.get()) != 0) {  // nothing written: nothing to sync
    int err = errno;
    undo();
    fail_system(err, "sync", path);
  }
  // the append is made and synced: from here on, failures are warnings
  if (remove_on_failure && data.empty()) remove_created(fd, target);  // nothing written: no empty file left
  else if (created && sync) sync_folder_after_commit(dir_name(target));
  try {
    fd.close(path);
  } catch (const Error& e) {
    warn(e.what());
  }
}
}  // namespace

void append_locked_with(const std::string& path, size_t tail_bytes, const MakeAppend& make, mode_t mode, bool sync) {
  const int access_mode = tail_bytes > 0 ? O_RDWR : O_WRONLY;
  for (;;) {
    // resolved each time round: a link swapped in meanwhile is checked again
    const std::string target = resolve_symlinks(path);
    bool created = false;
    Fd fd = open_for_append(target, path, access_mode, mode, created);
    if (!fd) continue;
    flock_wait(fd.get(), true, path);
    struct stat held, named;
    if (fstat(fd.get(), &held) != 0) fail_system(errno, "stat", path);
    if (lstat(target.c_str(), &named) != 0 || named.st_ino != held.st_ino || named.st_dev != held.st_dev)
      continue;  // replaced or removed while we waited: lock what path names now
    append_held(fd, target, path, held.st_size, created, tail_bytes, make, sync);
    return;
  }
}

namespace {
// The refusal of refuse_special_file, at a name already resolved
void refuse_special_at(const AtFile& at, std::string_view verb, const std::string& shown) {
  struct stat st;
  if (at.look(st, true) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) fail_not_regular(verb, shown, st.st_mode);
}

// at's name opened without following a link; a link is resolved by the
// rule for shared folders (resolve_symlinks), at becomes its target and
// that is opened so. A name that is no link (nearly all) costs nothing
// more; ELOOP: a link swapped in meanwhile.
Fd open_resolved(AtFile& at, const std::string& path, int flags) {
  Fd fd = at.open(flags | O_NOFOLLOW);
  if (fd || errno != ELOOP) return fd;
  at = AtFile::following_links(path);
  return at.open(flags | O_NOFOLLOW);
}

// r.fd's file locked, if r.at still names it then
bool lock_named(LockedForReplace& r, const std::string& path, bool view) {
  struct stat& held = r.st;
  struct stat named;
  if (fstat(r.fd.get(), &held) != 0) fail_system(errno, "stat", path);
  if (S_ISDIR(held.st_mode)) fail_system(EISDIR, "read", path);
  if (!S_ISREG(held.st_mode)) fail_not_regular("open", path, held.st_mode);
  flock_wait(r.fd.get(), true, path);
  if (!r.at.look(named) || named.st_ino != held.st_ino || named.st_dev != held.st_dev)
    return false;  // replaced while we waited: lock the new file
  r.exists = true;
  r.mode = held.st_mode & 07777;
  if (view) r.contents = view_fd(r.fd.get(), path, &held);
  return true;
}
}  // namespace

LockedForReplace lock_for_replace(const std::string& path, bool view) {
  // resolved once: every try looks, opens and locks in the folder opened
  // here (or in the folder of a link's target, resolved when one is met),
  // and the lock keeps it for the write
  LockedForReplace r{.fd = Fd(), .contents = FileView(), .at = AtFile(path)};
  for (;;) {
    r.fd.reset();  // a try that found the name changed lets its lock go first
    // stat first: a device is refused without being opened (opening one can
    // have effects), and O_NONBLOCK keeps a FIFO swapped in meanwhile from
    // holding the open until a writer comes
    refuse_special_at(r.at, "open", path);
    r.fd = open_resolved(r.at, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (r.fd) {
      if (lock_named(r, path, view)) return r;
      continue;
    }
    if (errno == ELOOP) continue;  // a link swapped in since it was resolved
    if (errno != ENOENT) {
      int err = errno;
      refuse_special_at(r.at, "open", path);  // a socket (ENXIO), swapped in meanwhile
      fail_system(err, "open", path);
    }
    r.fd = r.at.open_folder();
    if (!r.fd) fail_system(errno, "open folder", r.at.folder_path());
    flock_wait(r.fd.get(), true, r.at.folder_path());
    if (!r.at.exists()) return r;
    // created while we waited: lock it
  }
}

std::optional<FileId> link_new_file(const std::string& path, std::string_view data, mode_t mode, bool sync) {
  return link_new_in(Folder(dir_name(path)), base_name(path), data, mode, sync, path);
}

std::optional<FileId> link_new_file(const AtFile& at, std::string_view data, mode_t mode, bool sync) {
  return link_new_in(at.folder(), at.name(), data, mode, sync, at.shown());
}

std::optional<FileSnapshot> read_file_snapshot(const std::string& path, size_t max_bytes, bool listed_regular) {
  struct stat st;
  Fd fd = open_regular_nofollow(path, st, listed_regular);
  if (!fd) return std::nullopt;
  FileSnapshot snap;
  snap.mtime = static_cast<int64_t>(st.st_mtime);
  snap.id = {st.st_dev, st.st_ino};
  // one byte more than allowed tells "exactly max_bytes" from "more"
  const size_t limit = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;
  snap.data = read_regular_up_to(fd.get(), limit, st.st_size, path);
  snap.too_big = snap.data.size() > max_bytes;
  if (snap.too_big) snap.data.resize(max_bytes);
  return snap;
}

}  // namespace loopkit
