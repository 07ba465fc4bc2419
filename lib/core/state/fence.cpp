// Fences (store.hpp): a document written only while a lock is still held
// by its owner. The document store checks the fence with its write; this is
// the lock's half, the same for files and etcd.

#include "core/lock/lock.hpp"
#include "core/state/store.hpp"
#include "sys/base/error.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/base/format.hpp"

namespace loopkit {

namespace {
bool on_same_etcd(const std::string& a, const std::string& b) {
  etcd::Target x = etcd::parse_etcd_url(a), y = etcd::parse_etcd_url(b);
  if (x.tls != y.tls || x.endpoints.size() != y.endpoints.size()) return false;
  for (std::size_t i = 0; i < x.endpoints.size(); ++i)
    if (x.endpoints[i].host != y.endpoints[i].host || x.endpoints[i].port != y.endpoints[i].port) return false;
  return true;
}
}  // namespace

// Only a lock in the document's own store can be checked atomically with
// its write: a file's under the lock folder's flock, a key's in the same
// transaction.
Fence open_fence(const std::string& lock, const std::string& document, pid_t owner, double timeout) {
  if (document == "-") fail_usage("--fence needs a FILE to write, not standard input");
  const bool on_etcd = etcd::is_etcd_url(lock_operand(lock));
  if (on_etcd != etcd::is_etcd_url(document) || (on_etcd && !on_same_etcd(lock, document)))
    fail_usage(
        loopkit::format("--fence {}: a lock fences writes in its own store only (a lock file a file's, "
                        "an etcd key those of keys on the same etcd)",
                        quoted(lock)));
  return Fence{lock, open_lock_store(lock, {.timeout = timeout}), owner_process(owner)};
}

// A dead owner (no start time read) holds nothing: its lock is stale.
std::optional<LockEntry> check_fence(Fence& fence, Fd& held, int held_folder) {
  if (held_folder < 0 || !fence.lock->held_through(held_folder)) held = fence.lock->hold();
  LockEntry e = fence.lock->read();
  if (!fence.owner.start || e.state != LockFile::readable || !is_lock_ours(e.record, fence.owner)) return std::nullopt;
  return e;
}

}  // namespace loopkit
