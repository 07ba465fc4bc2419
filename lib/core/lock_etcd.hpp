// Session locks on etcd keys (contract section 9): the lock file's record in
// a key put with a lease, created only where the key is absent; the lease's
// keep-alives are the heartbeat, and its expiry frees the lock of a holder
// that died or lost the network, with nobody to reap it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/lock.hpp"
#include "sys/etcd.hpp"

namespace loopkit::etcdlock {

inline constexpr int64_t default_ttl = 60;

// A lock key as read: the LockFile of the file tools (state readable,
// unreadable or missing) plus what etcd knows of it.
struct LockKey {
  std::string key;
  LockFile lock;
  int64_t revision = 0;        // the fencing token: the acquiring write's revision (mod_revision)
  int64_t lease = 0;           // the lease the key is put with
  std::optional<int64_t> ttl;  // seconds left on that lease
};

struct Acquired {
  AcquireResult result;  // created, took_over, refreshed, held or interrupted
  int64_t lease = 0, revision = 0;
  LockKey holder;  // held: who holds it
};

// Take the lock at target.key for request.owner with a lease of ttl seconds.
// A key held by a dead owner of this host (section 5) is taken over in two
// conditioned steps; our own lock is "refreshed" (its lease kept alive).
Acquired acquire(etcd::Client& client, const std::string& key, const AcquireRequest& request, int64_t ttl);

// The lock's lease kept alive; false when the lease is gone (the lock is lost).
bool keep_alive(etcd::Client& client, int64_t lease);

// Delete the key only while it still holds the lease it was judged by: the
// lease is revoked, which deletes the keys attached to it and nothing else,
// in one write. Released::missing when there is no key, not_ours when
// another holds it.
Released release(etcd::Client& client, const std::string& key, const Owner& owner, bool force);

// A lock whose lease we hold (lock-acquire's own, COMMAND done): revoking the
// lease removes the key if it is still ours. False when the lease had already
// run out, and the key with it.
bool release_lease(etcd::Client& client, int64_t lease);

// Refresh (one keep-alive) if ours.
RefreshResult refresh(etcd::Client& client, const std::string& key, const Owner& owner, int64_t* lease);

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
Verdict judge(const LockKey& k);

// Remove the lock if it is still the one judged stale (same mod revision).
bool remove_if_unchanged(etcd::Client& client, const LockKey& k);

// lock-status's line and JSON object, with revision and ttl added
std::string describe(const std::string& url, const LockKey& k, const Verdict& v);
std::string to_json(const std::string& url, const LockKey& k, const Verdict& v);

// lock-acquire without COMMAND: a process in the background that keeps the
// lease alive every ttl/3 while the owner lives and the lock is ours; when
// the owner dies it releases the lock, when the lock is released or lost it
// ends.
void start_keeper(const etcd::Target& target, const std::string& key, const Owner& owner, int64_t lease, int64_t ttl,
                  double timeout);

}  // namespace loopkit::etcdlock
