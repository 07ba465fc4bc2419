// The store of documents (issue 22), implemented by files and standard
// input (state_files.cpp) and by etcd keys (core/etcd/state_etcd.cpp);
// state-set's read-modify-write is written once over it (state_update.cpp).
//
// The calling sequence (as state_update.cpp runs it):
//
// - open_document_store(operand) picks the store of a FILE operand: a file,
//   "-" (standard input, a filter), or an etcd URL (in loopkit-etcd only).
// - read() takes one look at the document (DocumentRead; files: held under
//   the file's exclusive flock until the next read or the store goes).
// - commit(seen, write, fence) stores the new document only if it is still
//   as seen and, for a fenced write (open_fence), only while the fence's
//   lock is still held, checked with the write: Commit::changed means
//   nothing was written and the caller reads again (the retry loop),
//   Commit::lock_lost that the fence no longer holds.
// - A run that changes nothing asks fence_holds() instead.
//
// Errors: a missing document is a value (DocumentRead::exists false,
// worded by missing()); a store that cannot be read or written throws
// loopkit::Error with its exit code (4 for the system, 2 for a malformed
// operand). Before the commit point nothing is changed (the new text goes
// to a temporary file, or into one transaction); after it, a failure is a
// warning (loopkit(7), COMMIT POINT).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/edit/textedit.hpp"  // textedit::Sink: what a commit writes into
#include "core/lock/store.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/mapped.hpp"

namespace loopkit {

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
