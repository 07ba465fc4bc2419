// What lock-status and lock-reap show of etcd lock keys: keys read as lock
// records, an operand's keys (one, or a folder's) and each one's line and
// JSON object, with the key's revision and its lease's TTL beside the
// record (lock_etcd.hpp).
#include <algorithm>

#include "core/etcd/lock_etcd.hpp"
#include "core/json/json_members.hpp"
#include "core/lock/lock_queue.hpp"
#include "core/lock/lock_record.hpp"
#include "sys/base/format.hpp"

namespace loopkit::etcdlock {

LockKey from_kv(const etcd::KeyValue& kv) {
  LockKey k;
  k.key = kv.key;
  k.revision = kv.mod_revision;
  k.lease = kv.lease;
  k.text = kv.value;
  try {
    k.record = parse_lock_record(kv.value, kv.key);
    k.state = LockFile::readable;
  } catch (const Error& e) {
    k.state = LockFile::unreadable;
    k.problem = e.what();
  }
  return k;
}

void add_ttl(etcd::Client& client, LockKey& k) {
  if (!k.lease) return;
  if (auto st = client.lease_time_to_live(k.lease)) k.ttl = st->ttl;
}

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
    if (is_wait_ticket_key(kv.key)) continue;  // a waiter's place in line, no lock
    out.push_back(from_kv(kv));
    if (with_ttl) add_ttl(client, out.back());
  }
  return out;
}

std::string describe(const std::string& url, const LockEntry& k, const Verdict& v) {
  if (k.state != LockFile::readable) return describe_lock(url, k, v);
  // the lease, not a heartbeat in the record, says that its holder lives
  std::string s = url + ": " + state_name(k, v);
  if (v.stale) s += " (" + v.reason + ")";
  s += ", " + describe_owner(k.record);
  if (v.age) s += loopkit::format(", taken {}s ago", std::max<int64_t>(0, *v.age));
  s += loopkit::format(", revision {}", k.revision);
  if (k.ttl) s += loopkit::format(", lease expires in {}s", *k.ttl);
  return s;
}

std::string to_json(const std::string& url, const LockEntry& k, const Verdict& v) {
  JsonMembers o = *parse_json_object(lock_json(url, k, v), "lock_json");
  if (k.state != LockFile::missing) {
    o.set_integer("revision", k.revision);
    if (k.ttl) o.set_integer("ttl", *k.ttl);
  }
  return o.json();
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

}  // namespace loopkit::etcdlock
