#include "core/lock_etcd.hpp"

#include <fmt/format.h>

#include "sys/clock.hpp"
#include "sys/proc.hpp"
#include "sys/spawn.hpp"

namespace loopkit::etcdlock {

namespace {

LockKey from_kv(const etcd::KeyValue& kv) {
  LockKey k;
  k.key = kv.key;
  k.revision = kv.mod_revision;
  k.lease = kv.lease;
  k.lock.text = kv.value;
  try {
    k.lock.record = parse_lock_record(kv.value, kv.key);
    k.lock.state = LockFile::readable;
  } catch (const Error& e) {
    k.lock.state = LockFile::unreadable;
    k.lock.problem = e.what();
  }
  return k;
}

void add_ttl(etcd::Client& client, LockKey& k) {
  if (!k.lease) return;
  if (auto st = client.lease_time_to_live(k.lease)) k.ttl = st->ttl;
}

std::string record_text(const json::object& record) { return json::compact(record) + "\n"; }

}  // namespace

LockKey read(etcd::Client& client, const std::string& key, bool with_ttl) {
  auto kv = client.get(key);
  if (!kv) {
    LockKey k;
    k.key = key;
    return k;
  }
  LockKey k = from_kv(*kv);
  if (with_ttl) add_ttl(client, k);
  return k;
}

std::vector<LockKey> read_folder(etcd::Client& client, const std::string& prefix, bool with_ttl) {
  std::vector<LockKey> out;
  for (const auto& kv : client.range(prefix, true).kvs) {
    out.push_back(from_kv(kv));
    if (with_ttl) add_ttl(client, out.back());
  }
  return out;
}

Verdict judge(const LockKey& k) {
  if (k.lock.state != LockFile::readable) return {};
  // every heartbeat age is far younger than this: only the local rules
  // (owner gone, pid reused, earlier boot) can find the lock stale
  return judge_lock(k.lock, StalePolicy{.stale_after = 1e15});
}

bool remove_if_unchanged(etcd::Client& client, const LockKey& k) {
  etcd::Txn t;
  t.compare.push_back(etcd::Compare::of(k.key, etcd::Field::mod_revision, etcd::Relation::equal, k.revision));
  t.success.push_back(etcd::Op::remove_key(k.key));
  bool removed = client.txn(t).succeeded;
  if (removed && k.lease) client.lease_revoke(k.lease);
  return removed;
}

Acquired acquire(etcd::Client& client, const std::string& key, const AcquireRequest& req, int64_t ttl) {
  Acquired a;
  const double deadline = monotonic_seconds() + req.wait_seconds;
  double backoff = 0.05;
  int64_t lease = client.lease_grant(ttl);
  for (;;) {
    // made at each attempt: started_at is when the lock was got, not when the wait began
    json::object record = new_lock_record(req.session, req.owner, current_epoch());
    // the lease is the heartbeat here: a record's heartbeat would never move
    record.erase("heartbeat");
    record.erase("heartbeat_epoch");
    record["lease"] = std::to_string(lease);  // as a number it would exceed what jq keeps exact
    etcd::GuardedPut put;
    put.key = key;
    put.value = record_text(record);
    put.lease = lease;  // our own, fresh: a lost answer is told by value and lease alone
    if (auto rev = client.put_if_unchanged(put)) {
      if (a.result.outcome != AcquireResult::took_over) a.result.outcome = AcquireResult::created;
      a.result.record = record;
      a.lease = lease;
      a.revision = *rev;
      return a;
    }
    LockKey held = read(client, key, false);
    if (held.lock.state == LockFile::missing) continue;  // released meanwhile: try again at once
    if (held.lock.state == LockFile::readable && is_lock_ours(held.lock.record, req.owner)) {
      client.lease_revoke(lease);
      if (!keep_alive(client, held.lease)) continue;  // ours, but its lease just ran out
      a.result.outcome = AcquireResult::refreshed;
      a.result.record = held.lock.record.fields;
      a.lease = held.lease;
      a.revision = held.revision;
      return a;
    }
    Verdict v = judge(held);
    if (v.stale) {
      // step one of a takeover; step two is the conditioned create above,
      // which exactly one of racing contenders wins
      if (remove_if_unchanged(client, held)) {
        a.result.outcome = AcquireResult::took_over;
        a.result.verdict = v;
      }
      continue;
    }
    double now = monotonic_seconds();
    if (now >= deadline) {
      client.lease_revoke(lease);
      a.result.outcome = AcquireResult::held;
      a.result.holder = held.lock;
      a.holder = held;
      add_ttl(client, a.holder);
      return a;
    }
    double pause = std::min(backoff, deadline - now);
    backoff = std::min(backoff * 2, 1.0);
    if (req.pause ? !req.pause(pause) : (sleep_seconds(pause), false)) {
      client.lease_revoke(lease);
      a.result.outcome = AcquireResult::interrupted;
      return a;
    }
    // a long wait must not outlive the lease that the new record will carry
    if (!keep_alive(client, lease)) lease = client.lease_grant(ttl);
  }
}

bool keep_alive(etcd::Client& client, int64_t lease) { return lease && client.lease_keepalive(lease).has_value(); }

Released release(etcd::Client& client, const std::string& key, const Owner& owner, bool force) {
  for (;;) {
    LockKey k = read(client, key, false);
    if (k.lock.state == LockFile::missing) return Released::missing;
    if (!force && (k.lock.state != LockFile::readable || !is_lock_ours(k.lock.record, owner)))
      return Released::not_ours;
    if (k.lease) {
      // only the key's holder knows its lease, so a key that still carries it
      // is still the one judged; gone, it was lost or taken: judge it again
      if (client.lease_revoke(k.lease)) return Released::removed;
      continue;
    }
    // a key without a lease (put by hand) is deleted only as it was read
    etcd::Txn t;
    t.compare.push_back(etcd::Compare::of(key, etcd::Field::mod_revision, etcd::Relation::equal, k.revision));
    t.compare.push_back(etcd::Compare::of(key, etcd::Field::lease, etcd::Relation::equal, 0));
    t.success.push_back(etcd::Op::remove_key(key));
    if (client.txn(t).succeeded) return Released::removed;
  }
}

bool release_lease(etcd::Client& client, int64_t lease) { return lease && client.lease_revoke(lease); }

RefreshResult refresh(etcd::Client& client, const std::string& key, const Owner& owner, int64_t* lease) {
  RefreshResult r;
  LockKey k = read(client, key, false);
  if (k.lock.state == LockFile::missing) return r;
  if (k.lock.state != LockFile::readable || !is_lock_ours(k.lock.record, owner)) {
    r.outcome = RefreshResult::not_ours;
    r.holder = k.lock;
    return r;
  }
  if (lease) *lease = k.lease;
  if (!keep_alive(client, k.lease)) return r;  // the lease ran out: the key went with it
  r.outcome = RefreshResult::refreshed;
  return r;
}

std::string describe(const std::string& url, const LockKey& k, const Verdict& v) {
  if (k.lock.state != LockFile::readable) return describe_lock(url, k.lock, v);
  // the lease, not a heartbeat in the record, says that its holder lives
  std::string s = url + ": " + state_name(k.lock, v);
  if (v.stale) s += " (" + v.reason + ")";
  s += ", " + describe_owner(k.lock.record);
  if (v.age) s += fmt::format(", taken {}s ago", std::max<int64_t>(0, *v.age));
  s += fmt::format(", revision {}", k.revision);
  if (k.ttl) s += fmt::format(", lease expires in {}s", *k.ttl);
  return s;
}

std::string to_json(const std::string& url, const LockKey& k, const Verdict& v) {
  json::value o = json::parse(lock_json(url, k.lock, v), "lock_json");
  if (k.lock.state != LockFile::missing) {
    o.as_object()["revision"] = k.revision;
    if (k.ttl) o.as_object()["ttl"] = *k.ttl;
  }
  return json::compact(o);
}

std::vector<Named> read_operand(etcd::Client& client, const std::string& url, const etcd::Target& target,
                                bool with_ttl) {
  std::vector<Named> out;
  if (!target.is_folder) {
    out.push_back({url, read(client, target.key, with_ttl)});
    return out;
  }
  for (auto& k : read_folder(client, target.key, with_ttl)) {
    std::string name = url + k.key.substr(std::min(target.key.size(), k.key.size()));
    out.push_back({std::move(name), std::move(k)});
  }
  return out;
}

void start_keeper(const etcd::Target& target, const std::string& key, const Owner& owner, int64_t lease, int64_t ttl,
                  double timeout) {
  start_detached([=] {
    etcd::Client client(target, timeout);
    const double every = std::max(static_cast<double>(ttl) / 3, 0.5);
    double last_ok = monotonic_seconds();
    for (;;) {
      if (wait_for_exit(owner.pid, every) || !is_owner_running(owner)) {
        release(client, key, owner, false);  // the owner died holding it: free it now, not a TTL later
        return;
      }
      try {
        if (!keep_alive(client, lease)) return;  // released, or lost
        last_ok = monotonic_seconds();
      } catch (const Error&) {
        // etcd out of reach: keep trying while the lease may still be alive
        if (monotonic_seconds() - last_ok > static_cast<double>(ttl)) return;
      }
    }
  });
}

}  // namespace loopkit::etcdlock
