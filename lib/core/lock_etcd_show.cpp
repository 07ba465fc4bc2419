// What lock-status and lock-reap show of etcd lock keys: an operand's keys
// (one, or a folder's) and each one's line and JSON object, with the key's
// revision and its lease's TTL beside the record (lock_etcd.hpp).
#include <algorithm>

#include "core/lock_etcd.hpp"
#include "core/json_members.hpp"
#include "core/lock_record.hpp"
#include "sys/format.hpp"

namespace loopkit::etcdlock {

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
