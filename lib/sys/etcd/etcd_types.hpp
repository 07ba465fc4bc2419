// The values of etcd's v3 API that the client and its callers exchange:
// keys with their revisions, compares, operations, transactions, leases.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace loopkit::etcd {

struct KeyValue {
  std::string key, value;
  int64_t create_revision = 0;  // 0 in a compare: the key does not exist
  int64_t mod_revision = 0;     // the revision of the write that made this value
  int64_t version = 0;          // writes since the key was created
  int64_t lease = 0;            // 0: none
};

struct RangeResult {
  int64_t revision = 0;  // the store's revision the read saw
  std::vector<KeyValue> kvs;
};

enum class Field { version, create_revision, mod_revision, value, lease };
enum class Relation { equal, not_equal, greater, less };

struct Compare {
  std::string key;
  Field field = Field::mod_revision;
  Relation relation = Relation::equal;
  int64_t number = 0;  // for every field but value
  std::string value;   // for Field::value
  // Not empty: every key in [key, range_end) must meet it (etcd 3.3+); an
  // empty range is compared as one key that does not exist
  std::string range_end;
  static Compare of(std::string key, Field field, Relation relation, int64_t number);
  static Compare value_is(std::string key, Relation relation, std::string value);
  static Compare absent(std::string key);  // create_revision == 0
  // every key that starts with prefix
  static Compare every_key_of(std::string prefix, Field field, Relation relation, int64_t number);
};

struct Op {
  enum Kind { put, remove, range } kind = range;
  std::string key, value;
  int64_t lease = 0;
  bool prefix = false;  // remove/range: every key starting with key
  static Op put_key(std::string key, std::string value, int64_t lease = 0);
  static Op remove_key(std::string key, bool prefix = false);
  static Op range_key(std::string key, bool prefix = false);
};

struct Txn {
  std::vector<Compare> compare;  // all must hold for success
  std::vector<Op> success, failure;
};

struct OpResult {
  std::vector<KeyValue> kvs;  // a range's keys
  int64_t deleted = 0;        // a remove's count
};

struct TxnResult {
  bool succeeded = false;
  int64_t revision = 0;           // the store's revision after it (a write's own revision when it wrote)
  std::vector<OpResult> results;  // one per op of the branch taken
};

struct LeaseStatus {
  int64_t ttl = 0;          // seconds left
  int64_t granted_ttl = 0;  // as granted (etcd raises less than 2 to 2)
  std::vector<std::string> keys;
};

// A change of a key seen in its history
struct Event {
  bool is_delete = false;
  KeyValue kv;  // for a delete: key and mod_revision only
};

// The end of the key range holding every key that starts with prefix.
std::string prefix_range_end(const std::string& prefix);

}  // namespace loopkit::etcd
