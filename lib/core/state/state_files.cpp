// The file store of documents (store.hpp): a state file is read under its
// exclusive flock (lock_for_replace), mapped, and replaced by the rename of
// a temporary file while that flock is still held, so a commit always finds
// the file as it was read. A fence is checked under the lock folder's
// flock, which every takeover, reap and release of that lock also holds
// (lock_files.cpp): the lock cannot change hands between the check and the
// rename.

#include "core/state/store.hpp"
#include "sys/base/error.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/fs/file.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"
#include "sys/fs/link.hpp"

namespace loopkit {

namespace {

class FileDocuments : public DocumentStore {
public:
  FileDocuments(std::string path, const DocumentOptions& options) : path_(std::move(path)), options_(options) {
    subject = path_;
  }
  const char* kind() const override { return "a file"; }
  std::string missing() const override { return loopkit::format("{}: no such file", quoted(path_)); }

  DocumentRead read() override {
    mapped_.reset();
    held_.fd.reset();  // the flock of an earlier read goes first
    held_ = lock_for_replace(path_, false);
    DocumentRead r;
    r.exists = held_.exists;
    if (!r.exists) return r;
    mapped_.emplace(held_.fd.get(), path_);
    r.mapped = &*mapped_;
    r.text = mapped_->text();
    return r;
  }

  Commit commit(const DocumentRead& seen, const DocumentWrite& w, Fence* fence) override {
    Fd folder_held;  // the lock folder's flock, until the rename is made
    // a missing file's folder is flocked already: when the lock is in it
    // too, that flock is the fence's (taken twice, it would wait for itself)
    if (fence && !check_fence(*fence, folder_held, held_.exists ? -1 : held_.fd.get())) return Commit::lock_lost;
    // the backup is written first and put in place with the new document,
    // both or neither: a write that fails (a full disk) leaves the older backup
    std::optional<StagedReplacement> backup;
    if (w.backup_why) back_up(seen, backup);
    AtomicWrite how{.mode = held_.exists ? held_.mode : static_cast<mode_t>(options_.mode), .sync = options_.sync};
    if (backup) how.along = &*backup;
    // the file read is flocked and still the one its name stands for: the
    // write need not look at the name again; a missing one is created in
    // the folder flocked. Either way in the folder the read resolved.
    if (held_.exists) how.held = &held_;
    if (w.gzip) {
      textedit::StringSink text;
      w.write(text);
      write_file_atomic(held_.at, gzip(text.text), how);
      return Commit::done;
    }
    write_file_atomic_with(held_.at, how, [&](int fd, const std::string& tmp) {
      textedit::FdSink out(fd, tmp, seen.mapped);
      w.write(out);
      out.flush();
    });
    return Commit::done;
  }

  bool fence_holds(Fence& fence) override {
    Fd folder_held;
    return check_fence(fence, folder_held, held_.exists ? -1 : held_.fd.get()).has_value();
  }

  std::string backup_name() const override { return quoted(path_ + ".backup"); }
  bool gzip_by_name() const override { return path_.size() > 3 && path_.compare(path_.size() - 3, 3, ".gz") == 0; }

private:
  std::string path_;
  DocumentOptions options_;
  LockedForReplace held_;
  std::optional<MappedFile> mapped_;

  // --on-invalid backup: the bad file's bytes go to FILE.backup beside the
  // file read, in the folder its lock resolved (never through a symlink
  // planted there: refused, exit 4), copied by the kernel.
  void back_up(const DocumentRead& seen, std::optional<StagedReplacement>& backup) {
    backup.emplace(held_.at.sibling(held_.at.name() + ".backup", held_.at.path() + ".backup"),
                   AtomicWrite{.mode = held_.mode, .sync = options_.sync, .follow_symlink = false},
                   [&](int fd, const std::string& tmp) {
                     if (seen.mapped && seen.mapped->at_file_offsets())
                       copy_range(held_.fd.get(), 0, fd, seen.text.size(), tmp);
                     else write_all(fd, seen.text, tmp);
                   });
  }
};

// "-": the document read from standard input; a commit only hands the
// result back (the caller prints it).
class StreamDocument : public DocumentStore {
public:
  StreamDocument() { subject = "standard input"; }
  const char* kind() const override { return "standard input"; }
  std::string missing() const override { return "standard input is empty"; }
  DocumentRead read() override {
    if (!text_) text_ = read_all(0, "standard input");
    return {.exists = text_->find_first_not_of(" \t\r\n") != std::string::npos, .text = *text_};
  }
  Commit commit(const DocumentRead&, const DocumentWrite&, Fence*) override { return Commit::done; }
  bool fence_holds(Fence&) override { return true; }  // never fenced (open_fence refuses "-")
  bool stores() const override { return false; }
  bool can_back_up() const override { return false; }
  std::string backup_name() const override { return ""; }

private:
  std::optional<std::string> text_;
};

}  // namespace

std::unique_ptr<DocumentStore> file_document_store(const std::string& path, const DocumentOptions& options) {
  return std::make_unique<FileDocuments>(path, options);
}

DocumentStoreOnEtcd document_store_on_etcd = nullptr;

std::unique_ptr<DocumentStore> open_document_store(const std::string& operand, const DocumentOptions& options) {
  if (operand == "-") return std::make_unique<StreamDocument>();
  if (!etcd::is_etcd_url(operand)) return file_document_store(operand, options);
  if (!document_store_on_etcd)
    fail(Exit::system, loopkit::format("{}: this program is built without the etcd client", quoted(operand)));
  return document_store_on_etcd(operand, options);
}

}  // namespace loopkit
