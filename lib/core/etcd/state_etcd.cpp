// The etcd store of documents (core/state/store.hpp): a read is one linearizable get;
// a commit puts the new value only if the key's mod revision has not moved
// since (state_update.cpp reads and edits again when another writer came first),
// and, fenced, only if the lock key's has not either, in one transaction.

#include "core/state/state.hpp"
#include "core/state/store.hpp"
#include "sys/base/error.hpp"
#include "sys/etcd/etcd.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/base/format.hpp"
#include "sys/gz/gz.hpp"

namespace loopkit {

namespace {

etcd::Target key_target(const std::string& url) {
  etcd::Target t = etcd::parse_etcd_url(url);
  if (t.is_folder)
    fail_usage(loopkit::format("{}: a state document is one key, not a folder (the URL ends in '/')", quoted(url)));
  return t;
}

// Each write also stores a fresh write id here, in the same transaction, so
// that a write whose answer was lost is recognised as ours even when another
// writer put the same bytes from the same revision (two n+=1 from n=5). The
// NUL byte keeps these keys out of every folder of keys that start with '/'.
std::string write_id_key(const std::string& key) { return std::string("\0loopkit/write-id", 17) + key; }

std::optional<std::string> read_state_etcd(const std::string& url, double timeout_seconds) {
  etcd::Target t = key_target(url);
  etcd::Client client(t, timeout_seconds);
  auto kv = client.get(t.key);
  if (!kv) return std::nullopt;
  return std::move(kv->value);
}

class EtcdDocument : public DocumentStore {
public:
  EtcdDocument(const std::string& url, const DocumentOptions& options)
      : target_(key_target(url)), client_(target_, options.timeout) {
    subject = url;
  }
  const char* kind() const override { return "an etcd key"; }
  std::string missing() const override { return loopkit::format("{}: no such key", quoted(subject)); }

  // A blank value is no document, as a missing key is.
  // After a commit that found the key changed, the key as that transaction
  // saw it serves this read: a round trip fewer for each retry.
  DocumentRead read() override {
    if (seen_.revision) {
      kv_.reset();
      if (!seen_.kvs.empty()) kv_ = std::move(seen_.kvs.front());
      seen_ = {};
    } else {
      kv_ = client_.get(target_.key);
    }
    DocumentRead r;
    if (!kv_) return r;
    r.exists = kv_->value.find_first_not_of(" \t\r\n") != std::string::npos;
    r.text = kv_->value;
    r.revision = kv_->mod_revision;
    return r;
  }

  Commit commit(const DocumentRead& seen, const DocumentWrite& w, Fence* fence) override {
    textedit::StringSink text;
    w.write(text);
    etcd::GuardedPut put{.key = target_.key,
                         .value = w.gzip ? gzip(text.text) : std::move(text.text),
                         .lease = kv_ ? kv_->lease : 0,  // a value set on a leased key stays leased
                         .expect_mod_revision = kv_ ? kv_->mod_revision : 0,
                         .also = {},
                         .also_put = {},
                         .marker_key = write_id_key(target_.key)};
    if (w.backup_why) put.also_put.emplace_back(target_.key + ".backup", std::string(seen.text));  // as FILE.backup
    if (fence) {
      Fd nothing_held;  // etcd holds nothing: the transaction compares
      std::optional<LockEntry> lock = check_fence(*fence, nothing_held);
      if (!lock) return Commit::lock_lost;
      put.also.push_back(
          etcd::Compare::of(lock->key, etcd::Field::mod_revision, etcd::Relation::equal, lock->revision));
    }
    seen_ = {};
    put.seen_on_failure = &seen_;
    return client_.put_if_unchanged(put) ? Commit::done : Commit::changed;
  }

  bool fence_holds(Fence& fence) override {
    Fd nothing_held;
    return check_fence(fence, nothing_held).has_value();
  }

  std::string backup_name() const override { return loopkit::format("the key {}", quoted(target_.key + ".backup")); }

private:
  etcd::Target target_;
  etcd::Client client_;
  std::optional<etcd::KeyValue> kv_;
  etcd::RangeResult seen_;  // the key as a failed commit saw it (revision 0: none)
};

}  // namespace

const StateOnEtcd etcd_state{read_state_etcd};

std::unique_ptr<DocumentStore> etcd_document_store(const std::string& url, const DocumentOptions& options) {
  return std::make_unique<EtcdDocument>(url, options);
}

}  // namespace loopkit
