// A client for etcd's v3 JSON API (the gRPC gateway) on one reused HTTP/1.1
// connection, plain or TLS. Every call has its own deadline (the timeout given
// to the Client); connection failures move on to the next endpoint, etcd's
// retryable errors (no leader, leader changed, timeouts) are retried with
// back-off until that deadline. Failures are Error with exit 4 carrying
// etcd's message.
//
// Writes and lost answers: when a write was sent and its answer lost (a
// member died, the connection broke, etcd said "leader changed" or "request
// timed out"), it may or may not have committed, and may even commit later.
// Plain writes (put, remove, txn) then throw OutcomeUnknown; never retry them
// blindly. put_if_unchanged and lease_grant find out instead (see there).
// Beast, Asio and OpenSSL stay in the .cpp files: including this header is
// cheap, and OpenSSL is only initialized when a TLS client connects.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sys/error.hpp"
#include "sys/etcd_url.hpp"

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
  static Compare of(std::string key, Field field, Relation relation, int64_t number);
  static Compare value_is(std::string key, Relation relation, std::string value);
  static Compare absent(std::string key);  // create_revision == 0
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

// etcd answered with an error: exit 4, etcd's message; code is its gRPC code
class EtcdError : public Error {
public:
  EtcdError(int code, std::string etcd_message, const std::string& message)
      : Error(Exit::system, message), code_(code), etcd_message_(std::move(etcd_message)) {}
  int grpc_code() const { return code_; }
  const std::string& etcd_message() const { return etcd_message_; }

private:
  int code_;
  std::string etcd_message_;
};

// A write was sent and its answer lost: exit 4, "... outcome unknown"
class OutcomeUnknown : public Error {
public:
  explicit OutcomeUnknown(const std::string& message) : Error(Exit::system, message) {}
};

// A write conditioned on the key's mod revision, recognizable afterwards.
struct GuardedPut {
  std::string key, value;
  int64_t lease = 0;
  int64_t expect_mod_revision = 0;                            // 0: the key must not exist
  std::vector<Compare> also;                                  // further conditions, all must hold
  std::vector<std::pair<std::string, std::string>> also_put;  // more keys written (no lease) with it
  // Optional. When set, the same transaction writes a fresh random write id
  // to this key, and a lost answer is judged by that id instead of by value
  // and lease: needed when another writer could put the same value with the
  // same lease from the same revision (two "n+=1" from n=5 both write 6).
  std::string marker_key;
};

class Client {
public:
  // timeout_seconds bounds each call, retries and outcome checks included
  explicit Client(const Target& target, double timeout_seconds = 5);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Linearizable reads. revision > 0 reads the store as it was then (exit 4
  // if etcd has compacted it away).
  RangeResult range(const std::string& key, bool prefix = false, int64_t revision = 0);
  std::optional<KeyValue> get(const std::string& key);

  // Unconditional writes; OutcomeUnknown when the answer is lost.
  int64_t put(const std::string& key, const std::string& value, int64_t lease = 0);  // its revision
  int64_t remove(const std::string& key, bool prefix = false);                       // keys deleted
  TxnResult txn(const Txn& txn);

  // Puts if the key is still at expect_mod_revision (and `also` holds): the
  // write's revision if it committed, nullopt if a condition failed. Never
  // applied twice, never reported wrongly: if the answer is lost, it reads
  // the key; while the key is unchanged it sends the same transaction again
  // (both carry the same condition, so at most one commits); once the key has
  // moved, the first change after expect_mod_revision in the key's history
  // tells whether it was ours (by marker, else by value and lease).
  // OutcomeUnknown ("outcome unknown") if it cannot tell before the deadline.
  std::optional<int64_t> put_if_unchanged(const GuardedPut& put);

  // A lease of ttl seconds, granted exactly once: its id is chosen here at
  // random, so a lost answer is settled by asking whether that id exists.
  int64_t lease_grant(int64_t ttl_seconds);
  // The TTL restored, or nullopt when the lease is gone (expired or revoked).
  std::optional<int64_t> lease_keepalive(int64_t id);
  // false if the lease was already gone; its keys are deleted with it.
  bool lease_revoke(int64_t id);
  std::optional<LeaseStatus> lease_time_to_live(int64_t id, bool with_keys = false);

  // The first change of key after revision `after`, from etcd's history;
  // nullopt if there has been none. Exit 4 if the history was compacted.
  std::optional<Event> first_change_after(const std::string& key, int64_t after);

  // The endpoint the connection is (or was last) to, as HOST:PORT.
  std::string current_endpoint() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The end of the key range holding every key that starts with prefix.
std::string prefix_range_end(const std::string& prefix);

}  // namespace loopkit::etcd
