// Session locks on etcd keys (contract section 9): the lock file's record in
// a key put with a lease, created only where the key is absent; the lease's
// keep-alives are the heartbeat, and its expiry frees the lock of a holder
// that died or lost the network, with nobody to reap it.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/lock/lock.hpp"
#include "core/lock/store.hpp"
#include "sys/etcd/etcd.hpp"

namespace loopkit::etcdlock {

inline constexpr int64_t default_ttl = 60;

// A lock key as read: the entry of the store of locks.
using LockKey = LockEntry;

// The etcd store of locks (core/lock/store.hpp): create if absent and replace are
// puts conditioned on the key's mod revision (one transaction each), remove
// a delete so conditioned that also revokes the key's lease; the session's
// lease is the heartbeat, kept alive by keep-alives. A takeover of a dead
// owner's key is one conditioned put: of racing contenders exactly one wins.
std::unique_ptr<LockStore> store(const std::string& url, const StoreOptions& options, bool folder);

// The lock's lease kept alive; false when the lease is gone (the lock is lost).
bool keep_alive(etcd::Client& client, int64_t lease);

// A key's value read as a lock record (unreadable: its problem said), and
// the TTL its lease has left, asked of etcd.
LockKey from_kv(const etcd::KeyValue& kv);
void add_ttl(etcd::Client& client, LockKey& k);

LockKey read(etcd::Client& client, const std::string& key, bool with_ttl);
std::vector<LockKey> read_folder(etcd::Client& client, const std::string& prefix, bool with_ttl);

// What an operand of lock-status or lock-reap names: its key, or every key
// of a folder (a URL ending in '/'), each with the URL that names it.
struct Named {
  std::string url;
  LockKey key;
};
std::vector<Named> read_operand(etcd::Client& client, const std::string& url, const etcd::Target& target,
                                bool with_ttl);

// Live unless it belongs to a dead owner of this host (its lease is its
// liveness across hosts): section 5's local rules, no heartbeat ages.
Verdict judge(const LockEntry& k);

// Remove the lock if it is still the one judged stale (same mod revision).
bool remove_if_unchanged(etcd::Client& client, const LockKey& k);

// lock-status's line and JSON object, with revision and ttl added
std::string describe(const std::string& url, const LockEntry& k, const Verdict& v);
std::string to_json(const std::string& url, const LockEntry& k, const Verdict& v);

}  // namespace loopkit::etcdlock
