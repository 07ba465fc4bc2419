// One storage interface (issue 22), implemented by files and by etcd keys.
// Locks: a record at a name that can be created if absent, read, and
// replaced or removed only if unchanged since it was read (lock_files.cpp,
// lock_etcd.cpp); acquire, wait, refresh, takeover, release and reap are
// written once over it (lock.cpp). A session keeps a held lock alive: the
// heartbeat in the record for files, the lease for etcd (etcd's
// concurrency.Session and Mutex are the model). Documents: read, then
// commit if unchanged and, for a fenced write, only while a lock is still
// held (state_files.cpp, state_etcd.cpp); state-set's read-modify-write is
// written once over it (state_update.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json/json.hpp"
#include "core/lock/lock_record.hpp"
#include "core/edit/textedit.hpp"
#include "sys/fs/fd.hpp"
#include "sys/fs/mapped.hpp"

namespace loopkit {

// What a store holds at the lock's name, and what the store knows of it.
struct LockEntry : LockFile {
  std::string key;             // etcd: the key; files: ""
  int64_t revision = 0;        // etcd: the mod revision, the fencing token; files: 0
  int64_t lease = 0;           // etcd: the lease the key is put with
  std::optional<int64_t> ttl;  // etcd: seconds left on that lease, when asked
};

// What keeps a lock alive while its owner holds it.
class LockSession {
public:
  virtual ~LockSession() = default;
  // Completes a new record for this store (files: heartbeat fields; etcd:
  // the session's lease, granted at the first call).
  virtual void stamp(JsonMembers& record, int64_t now) = 0;
  // Keeps `held`, which is ours, alive: files write a fresh heartbeat (with
  // `every` as heartbeat_every), etcd keeps its lease alive and adopts it.
  // The record now held, or nullopt when the lock went meanwhile.
  virtual std::optional<JsonMembers> beat(const LockEntry& held, int64_t now, std::optional<double> every) = 0;
  // A wait's pause went by (etcd: the lease it will put must outlive it).
  virtual void waited() {}
  // The lock was not got: what the session made for it is given back.
  virtual void abandon() {}
  // The revision of the last write that got the lock (etcd), else 0.
  virtual int64_t revision() const { return 0; }
  // Gives up the lock this session got, without reading it first, where
  // the store can (etcd: revoking the session's lease deletes the key only
  // while it still carries that lease, so a lock taken over meanwhile
  // stays its new holder's). False where it cannot (files): release_lock.
  virtual bool release_own() { return false; }
  // Keeps the lock alive in the background while its owner lives, after
  // the tool has gone (etcd's keeper; files: the owner beats itself).
  virtual void keep_in_background(const Owner&) {}
};

class LockStore {
public:
  virtual ~LockStore() = default;
  // Writes the record where nothing is; false when something is there.
  virtual bool create(const JsonMembers& record) = 0;
  virtual LockEntry read() = 0;
  // Held while deciding about an entry to replace or remove (files: the
  // folder's flock, under which the entry is read again; etcd: nothing,
  // its writes compare the revision read).
  virtual Fd hold() = 0;
  // Whether the flock hold() takes is the one that folder_fd, an open
  // folder this process has flocked, already holds (a missing document's
  // folder is the lock's): then it is not taken twice, which would wait
  // for itself for ever.
  virtual bool held_through(int /*folder_fd*/) const { return false; }
  // Only the entry read: false, changing nothing, when it changed or went.
  virtual bool replace(const LockEntry& seen, const JsonMembers& record) = 0;
  virtual bool remove(const LockEntry& seen) = 0;
  // The same while held: held is what hold() returned (a file store removes
  // through the folder it flocked instead of opening it again)
  virtual bool remove_held(const LockEntry& seen, const Fd& /*held*/) { return remove(seen); }
  virtual std::unique_ptr<LockSession> session(const Owner& owner) = 0;
  // Whether an entry is stale (judge_lock; etcd: leases, not heartbeats,
  // say who lives on other hosts, and an unreadable key is never stale).
  virtual Verdict judge(const LockEntry& e, const StalePolicy& asked) const { return judge_lock(e, asked); }
  // The locks under an operand of lock-status or lock-reap, named as the
  // user would (etcd: the key, or every key under a URL ending in '/').
  struct Named {
    std::string name;
    LockEntry entry;
  };
  virtual std::vector<Named> list(const std::string& operand, bool with_ttl);
  // Files: an owner releasing a lock that its own beater still refreshes
  // leaves the released mark (lock.hpp); etcd: nothing to say.
  virtual void mark_released(const LockEntry&) {}
  // Whether a lock that `owner` held since taken_at and that is no longer
  // there as it was went by its owner's release (a clean end for a beater).
  virtual bool was_released(const Owner& owner, const std::string& taken_at, bool missing) = 0;
  // Whether a failed beat of keep_heartbeat is said and tried again at the
  // next (etcd out of reach: the lease may live on) rather than the end.
  virtual bool tolerates_outage() const { return false; }
  // The pause of keep_heartbeat between two beats: up to `seconds`, ended
  // early by the owner's exit (true) and, where the store can see it (files:
  // the lock's name is watched), by a change of the lock, after which the
  // caller reads it again: the owner's lock-release then ends its beater at
  // once, not at the next beat.
  enum class Pause { time_up, changed, owner_exited };
  virtual Pause pause_between_beats(const Owner& owner, double seconds);
  // What holding a lock while a command runs means here: how often a beat
  // is due for a --heartbeat of `asked` seconds, how long beats may fail
  // before the lock counts as lost, and whether a lost lock ends the
  // command (etcd: another may take it at once) or is only said (files).
  virtual double beat_every(double asked) const { return asked; }
  virtual double outage_limit() const { return 0; }
  virtual bool lost_ends_command() const { return false; }
  // lock-status's and lock-acquire's words for an entry at `name`.
  virtual std::string describe(const std::string& name, const LockEntry& e, const Verdict& v) const;
  virtual std::string to_json(const std::string& name, const LockEntry& e, const Verdict& v) const;
};

// The store of a LOCKFILE operand: a file, or an etcd URL (only in
// loopkit-etcd, where lock_store_on_etcd is set; the tools in bin/ hand
// such a call over to it before they get here).
struct StoreOptions {
  double timeout = 5;  // etcd: per call
  int64_t ttl = 60;    // etcd: the lease of a new lock
  double wait = 0;     // etcd: a waiter's --wait, through which its calls ride out an outage
};
// listed_regular: a folder listing said path is a regular file
std::unique_ptr<LockStore> file_lock_store(const std::string& path, bool listed_regular = false);
// A folder (for list) is accepted only when `folder`.
std::unique_ptr<LockStore> open_lock_store(const std::string& operand, const StoreOptions& options,
                                           bool folder = false);
using LockStoreOnEtcd = std::unique_ptr<LockStore> (*)(const std::string& url, const StoreOptions& options,
                                                       bool folder);
extern LockStoreOnEtcd lock_store_on_etcd;

// ---- documents ---------------------------------------------------------------

// What a document store holds at its name, read for one read-modify-write.
struct DocumentRead {
  bool exists = false;           // false: no file or key (a stream: blank)
  std::string_view text;         // as stored, gzip included; valid until the next read
  MappedFile* mapped = nullptr;  // files: the map behind text (pages released behind a pass, checked whole)
  int64_t revision = 0;          // etcd: the key's mod revision
};

// What a commit stores: the new document, written into the sink given
// (files stream it straight into the temporary file, so big untouched
// slices never enter memory), gzipped when the document was. With
// backup_why, the text read is kept as the document's backup (FILE.backup,
// the key KEY.backup) by the same commit, and the warning says why.
struct DocumentWrite {
  std::function<void(textedit::Sink&)> write;
  bool gzip = false;
  std::optional<std::string> backup_why;
};

// A fenced write's condition: the lock named `operand` still held by
// `owner` when the document is stored (state-set --fence).
struct Fence {
  std::string operand;
  std::unique_ptr<LockStore> lock;
  Owner owner;
};

class DocumentStore {
public:
  virtual ~DocumentStore() = default;
  // Messages name it so.
  std::string subject;
  // What it is ("a file"), and the answer "no" when it is missing (made
  // only when said: most runs never say it).
  virtual const char* kind() const = 0;
  virtual std::string missing() const = 0;
  // One look at the document. Files: it is held under its exclusive flock
  // until the next read or the store goes, so a commit finds it unchanged.
  virtual DocumentRead read() = 0;
  enum class Commit { done, changed, lock_lost };
  // Stores w if the document is still as `seen` (changed: nothing written,
  // read again) and the fence, if any, still holds, checked atomically with
  // the write: under the lock folder's flock for files, in the same
  // transaction on etcd (lock_lost: nothing written). After the commit
  // point a failure is a warning (loopkit(7), COMMIT POINT).
  virtual Commit commit(const DocumentRead& seen, const DocumentWrite& w, Fence* fence) = 0;
  // A run that changes nothing is fenced too (the engines learn of a lost
  // lock from its answer): whether the fence holds now, while the document
  // is as `seen` (files: still under its flock).
  virtual bool fence_holds(Fence& fence) = 0;
  // Whether a commit stores anything (a stream's result is only printed).
  virtual bool stores() const { return true; }
  // Whether --on-invalid backup can keep the text read somewhere, and
  // where, as the warning names it.
  virtual bool can_back_up() const { return true; }
  virtual std::string backup_name() const = 0;
  // Whether its name says gzip (a FILE ending in ".gz"): then it is read as
  // the readers read it (gzip, else corrupt) and always written gzip.
  virtual bool gzip_by_name() const { return false; }
};

struct DocumentOptions {
  double timeout = 5;    // etcd: per call
  unsigned mode = 0600;  // files: a new file's permission bits
  bool sync = true;
};
// FILE, "-" (standard input, a filter) or an etcd URL (only in loopkit-etcd,
// where document_store_on_etcd is set).
std::unique_ptr<DocumentStore> open_document_store(const std::string& operand, const DocumentOptions& options);
std::unique_ptr<DocumentStore> file_document_store(const std::string& path, const DocumentOptions& options);
using DocumentStoreOnEtcd = std::unique_ptr<DocumentStore> (*)(const std::string& url, const DocumentOptions& options);
extern DocumentStoreOnEtcd document_store_on_etcd;
std::unique_ptr<DocumentStore> etcd_document_store(const std::string& url, const DocumentOptions& options);
// The lock a fence names, opened as lock-acquire opens it; only a lock in
// the document's own store can be checked with its write (else exit 2).
Fence open_fence(const std::string& lock, const std::string& document, pid_t owner, double timeout);
// The lock's entry while the fence holds (files: under the lock folder's
// flock, kept in `held`, unless held_folder, an open folder the caller has
// flocked, is that folder); nullopt when the owner no longer holds it.
std::optional<LockEntry> check_fence(Fence& fence, Fd& held, int held_folder = -1);

}  // namespace loopkit
