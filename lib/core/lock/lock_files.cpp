// The file store of locks (store.hpp): a lock is a JSON file, created by
// link(), replaced by rename() and removed by unlink() under the folder's
// flock; its session writes the heartbeat into the record.
#include <cerrno>
#include <unistd.h>

#include "core/json/utf8.hpp"
#include "core/lock/lock.hpp"
#include "core/lock/lock_queue.hpp"
#include "core/lock/store.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/folder.hpp"
#include "sys/base/format.hpp"
#include "sys/fs/link.hpp"
#include "sys/proc/proc.hpp"
#include "sys/fs/watch.hpp"

// Why takeover and reaping are race-free
// ---------------------------------------
// A lock file's name changes state in only these ways:
//   absent -> present   only by link() of a fully written, fsynced temporary
//                       file (link_new_file, as liblockfile does), which fails
//                       when the name exists: of many creators exactly one wins;
//   present -> present' (takeover, heartbeat, "already ours") only by rename()
//                       of a fully written temporary file over it;
//   present -> absent   (release, reap) only by unlink().
// Every rename and unlink happens while holding an exclusive flock on the
// lock's folder, after re-reading the file under that flock and deciding
// again from what it holds then. Outside the flock the name can therefore
// only appear, never change or vanish, and the decision made under the flock
// is still true when acted upon:
// - two contenders for a stale lock both fail to link(), then take the flock
//   in turn; the first replaces the lock, the second re-reads it, finds the
//   first alive and gives up. Exactly one wins.
// - a reaper re-reads under the flock; an owner's heartbeat or a takeover
//   happens wholly before (the reaper sees it and keeps the lock) or wholly
//   after (the owner finds the lock gone and says so). Nobody can link() a
//   new lock between the reaper's re-read and its unlink, as the name exists.
// Readers never need the flock: every state of the name is a whole file.
// What this cannot cover: tools that rewrite lock files without the folder's
// flock (an mv over a bare-pid file, say) can still race with a reaper.

namespace loopkit {

namespace {
// The link() half of the argument above: false when the name already exists.
bool create_lock_exclusively(const std::string& path, const JsonMembers& record) {
  // Checked first, though link() decides: a static binary's first exception
  // costs ~16M instructions (the unwinder sorts every FDE), and contenders
  // for a held lock are the common case.
  if (path_exists(path)) return false;
  // resolved once: created, synced and, on failure, removed in one folder
  const AtFile at(path);
  auto made = link_new_file(at, lock_text(record), 0644);
  if (!made) return false;
  try {
    at.folder().sync();
  } catch (const Error&) {
    // The lock is ours but not durable: a failure must leave nothing behind.
    // Removing it changes an existing lock, so it happens under the flock,
    // and only if the name still stands for the file we made.
    Fd folder = lock_folder(dir_name(path));
    remove_file_if_same(at.folder(), at.name(), *made);
    throw;
  }
  return true;
}

// The rename() half: only ever called holding the folder's flock. Returns
// false, writing nothing, when the lock file was deleted since it was read
// (rm takes no flock): a beat or a refresh must not bring it back.
bool replace_lock_under_flock(const std::string& path, const JsonMembers& record, const std::string& old_text) {
  try {
    AtomicWrite how{.mode = 0644,
                    .folder_sync_failure = AtomicWrite::undo_and_fail,  // undone below
                    .follow_symlink = false,
                    .only_if_present = true};
    return write_file_atomic(path, lock_text(record), how);
  } catch (const Error&) {
    // the rename may have been made before the folder's sync failed: put
    // the old lock back (best effort), so that a failure changes nothing
    try {
      if (read_lock_file(path).text != old_text) write_file_atomic(path, old_text, {.follow_symlink = false});
    } catch (const Error&) {
    }
    throw;
  }
}

// Unlink what was read under the folder's flock, and nothing else; held:
// that folder, open, when the caller has it.
bool remove_lock_read(const std::string& path, const LockFile& lock, const Fd* held = nullptr) {
  const Removal removal =
      held ? remove_file_if_same(Folder::borrowed(held->get(), dir_name(path)), base_name(path), lock.id)
           : remove_file_if_same(path, lock.id);
  switch (removal) {
    case Removal::removed: return true;
    case Removal::missing: return false;
    case Removal::changed: break;
  }
  fail(Exit::system, "cannot remove " + quoted(path) + ": it was replaced while being checked");
}

// Whether the owner released the lock taken at taken_at (its started_at):
// the mark its release left names that lock. The mark is removed then, best
// effort; one that cannot be read (a link planted there) is no mark.
bool take_released_mark(const std::string& path, const Owner& owner, const std::string& taken_at) {
  try {
    const std::string mark = released_mark_path(path);
    LockFile m = read_lock_file(mark);
    if (m.state != LockFile::readable || !is_lock_ours(m.record, owner) ||
        m.record.fields.string("started_at") != taken_at)
      return false;
    remove_file_if_same(mark, m.id);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// The heartbeat is the session: written into the record at each beat.
class FileSession : public LockSession {
public:
  FileSession(LockStore& store, const Owner& owner) : store_(store), owner_(owner) {}
  void stamp(JsonMembers&, int64_t) override {}  // new_lock_record dates the heartbeat
  std::optional<JsonMembers> beat(const LockEntry& held, int64_t now, std::optional<double> every) override {
    JsonMembers written = refreshed_record(held, owner_, now, every);
    if (!store_.replace(held, written)) return std::nullopt;  // deleted meanwhile
    return written;
  }

private:
  LockStore& store_;
  Owner owner_;
};

// A file lock's watch: its name, watched in its folder.
class NameLockWatch : public LockWatch {
public:
  explicit NameLockWatch(const std::string& path) : names_(dir_name(path), base_name(path)) {}
  bool active() const override { return names_.armed(); }
  // only after a change: a wait that timed out (a poll, for changes that
  // bring no event) most likely finds the lock still held, and its attempt
  // would only be made twice
  void disarm() override {
    if (changed_) names_.disarm();
  }
  bool rearm() override { return !names_.armed() && names_.arm(); }
  bool wait(double seconds) override { return changed_ = names_.wait(seconds); }

private:
  NameWatch names_;
  bool changed_ = false;
};

class FileStore : public LockStore {
public:
  explicit FileStore(std::string path, bool listed_regular = false)
      : path_(std::move(path)), listed_regular_(listed_regular) {}
  const std::string& path() const { return path_; }
  bool create(const JsonMembers& record) override { return create_lock_exclusively(path_, record); }
  LockEntry read() override {
    LockEntry e;
    static_cast<LockFile&>(e) = read_lock_file(path_, listed_regular_);
    return e;
  }
  Fd hold() override {
    // no folder, no lock in it (a fresh project): nothing to hold, and the
    // read that follows finds none; lock-release says "no lock", exit 1
    if (!path_exists(dir_name(path_))) return Fd();
    return lock_folder(dir_name(path_));
  }
  bool held_through(int folder_fd) const override { return is_same_folder(folder_fd, dir_name(path_)); }
  bool replace(const LockEntry& seen, const JsonMembers& record) override {
    return replace_lock_under_flock(path_, record, seen.text);
  }
  bool remove(const LockEntry& seen) override { return remove_lock_read(path_, seen); }
  bool remove_held(const LockEntry& seen, const Fd& held) override {
    return held ? remove_lock_read(path_, seen, &held) : remove(seen);
  }
  std::unique_ptr<LockSession> session(const Owner& owner) override {
    return std::make_unique<FileSession>(*this, owner);
  }
  void mark_released(const LockEntry& lock) override;
  std::string file() const override { return path_; }
  bool was_released(const Owner& owner, const std::string& taken_at, bool) override {
    return take_released_mark(path_, owner, taken_at);
  }
  Pause pause_between_beats(const Owner& owner, double seconds) override {
    // armed after the beat, so that its own rename does not count, and
    // disarmed before the next (see sys/fs/watch.hpp)
    if (!watch_) watch_.emplace(dir_name(path_), base_name(path_));
    watch_->arm();
    NameWatch::Woke woke = watch_->wait_or_exit(seconds, owner.pid);
    watch_->disarm();
    if (woke == NameWatch::Woke::exited) return Pause::owner_exited;
    return woke == NameWatch::Woke::changed ? Pause::changed : Pause::time_up;
  }

private:
  std::string path_;
  bool listed_regular_;
  std::optional<NameWatch> watch_;  // the lock's name, between two beats
};

// A mark whose beater is gone (killed -9 before its next beat) serves
// nobody: this release takes it away first.
void drop_orphan_mark(const std::string& path) {
  try {
    const std::string mark = released_mark_path(path);
    LockFile m = read_lock_file(mark);
    if (m.state == LockFile::missing) return;
    const auto& beater = m.record.heartbeat_pid;
    if (m.state == LockFile::readable && beater && is_pid_alive(*beater)) return;
    remove_file_if_same(mark, m.id);
  } catch (const Error&) {
  }
}

// Written before the unlink, so that a beater that finds the lock gone
// finds the mark too. Only a hint: not synced, and a failure to write it
// (a link planted at its name, a full disk) leaves the beater to say
// "no lock" as for a lock deleted under it, never stops the release.
// Only for a beater of its own (not the owner beating for itself, as
// lock-acquire -- COMMAND does) still running: one stopped first leaves
// no mark behind.
void FileStore::mark_released(const LockEntry& lock) {
  drop_orphan_mark(path_);
  const auto& beater = lock.record.heartbeat_pid;
  if (!lock.record.heartbeat_every || !beater || *beater == lock.record.pid || !is_pid_alive(*beater)) return;
  try {
    write_file_atomic(released_mark_path(path_), lock.text, {.mode = 0644, .sync = false, .follow_symlink = false});
  } catch (const Error&) {
  }
}
}  // namespace

std::string LockStore::describe(const std::string& name, const LockEntry& e, const Verdict& v) const {
  return describe_lock(name, e, v);
}
std::string LockStore::to_json(const std::string& name, const LockEntry& e, const Verdict& v) const {
  return lock_json(name, e, v);
}

std::unique_ptr<LockStore> file_lock_store(const std::string& path, bool listed_regular) {
  return std::make_unique<FileStore>(path, listed_regular);
}

std::unique_ptr<LockWatch> LockStore::watch() { return nullptr; }
std::unique_ptr<WaitLine> LockStore::join_line() { return nullptr; }

std::unique_ptr<LockWatch> open_lock_watch(LockStore& store) {
  const std::string file = store.file();
  if (!file.empty()) return std::make_unique<NameLockWatch>(file);
  return store.watch();
}

std::unique_ptr<WaitLine> join_wait_line(LockStore& store) {
  try {
    const std::string file = store.file();
    if (!file.empty()) return std::make_unique<WaitTicket>(file);
    return store.join_line();
  } catch (const Error& e) {
    warn(e.what());
    return nullptr;
  }
}

LockStoreOnEtcd lock_store_on_etcd = nullptr;

std::unique_ptr<LockStore> open_lock_store(const std::string& operand, const StoreOptions& options, bool folder) {
  if (!etcd::is_etcd_url(operand)) return file_lock_store(operand);
  if (!lock_store_on_etcd)
    fail(Exit::system, loopkit::format("{}: this program is built without the etcd client", quoted(operand)));
  return lock_store_on_etcd(operand, options, folder);
}

std::vector<LockStore::Named> LockStore::list(const std::string& operand, bool) { return {{operand, read()}}; }

std::string released_mark_path(const std::string& path) {
  std::string dir = dir_name(path);
  return (dir == "." && path.find('/') == std::string::npos ? "" : dir + "/") + "." + name_stem(base_name(path), 10) +
         ".released";
}

const std::string& lock_operand(const std::string& operand) {
  if (operand == "-") fail_usage("a lock cannot be '-' (standard input): name its file ('./-' for one named '-')");
  return operand;
}

std::vector<std::string> lock_files_in(const std::vector<std::string>& operands) {
  std::vector<std::string> paths;
  for (auto& f : lock_files_named(operands).files) paths.push_back(std::move(f.path));
  return paths;
}

LockFiles lock_files_named(const std::vector<std::string>& operands, bool missing_is_free) {
  LockFiles named;
  auto& files = named.files;
  for (const auto& op : operands) {
    // a lock file may be gone (released): nothing to reap; a folder that is
    // not there is a mistake (a wrong LOCK_DIRS), never a quiet success
    const PathKind kind = path_kind(lock_operand(op));
    if (kind == PathKind::missing && !missing_is_free && (!op.ends_with(".lock") || !path_exists(dir_name(op))))
      fail_system(ENOENT, "read", op);
    // a LOCKFILE not there is free; a folder not there holds none
    if (kind == PathKind::missing && missing_is_free && !op.ends_with(".lock")) continue;
    if (kind != PathKind::folder) {
      files.push_back({op});
      named.one = operands.size() == 1;
      continue;
    }
    std::string prefix = op == "." ? "" : op.back() == '/' ? op : op + "/";
    for (auto& e : folder_entries(op, ".lock")) {
      files.push_back({prefix + e.name, e.regular});
    }
  }
  return named;
}

void list_locks(const std::vector<std::string>& operands, const ListOptions& options,
                const std::function<void(const ListedLock&)>& each) {
  std::vector<std::string> files;
  for (const auto& operand : operands) {
    if (!etcd::is_etcd_url(operand)) {
      files.push_back(operand);
      continue;
    }
    std::unique_ptr<LockStore> store = open_lock_store(operand, {.timeout = options.timeout}, true);
    const bool one = operand.back() != '/';
    for (const auto& [name, e] : store->list(operand, options.with_ttl)) each({name, *store, e, one});
  }
  if (files.empty()) return;
  const LockFiles named = lock_files_named(files, options.missing_is_free);
  for (const auto& [path, listed_regular] : named.files) {
    std::unique_ptr<LockStore> store = file_lock_store(path, listed_regular);
    LockEntry e;
    try {
      e = store->read();
    } catch (const Error& error) {
      each({path, *store, e, named.one, true, &error});
      continue;
    }
    each({path, *store, e, named.one, true});
  }
}

bool names_one_lock(const std::vector<std::string>& operands) {
  return operands.size() == 1 && !is_folder(operands[0]);
}

std::string session_of_path(const std::string& path) {
  std::string name = base_name(path);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0) name.resize(name.size() - 5);
  return name;
}

std::string lock_session(const std::string& path, const std::optional<std::string>& given) {
  if (given) {
    if (!json::is_utf8(*given)) fail_usage("--session " + quoted(*given) + ": not UTF-8 text");
    return *given;
  }
  std::string name = session_of_path(path);
  if (!json::is_utf8(name))
    fail_usage("the session name " + quoted(name) + " (from the lock's name) is not UTF-8 text: give --session NAME");
  return name;
}

}  // namespace loopkit
