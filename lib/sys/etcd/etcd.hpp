// A client for etcd's v3 JSON API (the gRPC gateway) on one reused HTTP/1.1
// connection, plain or TLS. Every call has its own deadline (the timeout given
// to the Client); connection failures move on to the next endpoint, and they
// and etcd's retryable errors (no leader, leader changed, timeouts) are
// retried with back-off until that deadline, so that a restart of etcd
// shorter than it is ridden out. Failures are Error with exit 4 carrying
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

#include "sys/base/error.hpp"
#include "sys/etcd/etcd_types.hpp"
#include "sys/base/etcd_url.hpp"

namespace loopkit::etcd {

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
  std::vector<std::string> also_remove{};                     // keys deleted with it
  // Optional. When set, the same transaction writes a fresh random write id
  // to this key, and a lost answer is judged by that id instead of by value
  // and lease: needed when another writer could put the same value with the
  // same lease from the same revision (two "n+=1" from n=5 both write 6).
  std::string marker_key;
  // Optional. When set and a condition failed, the key as the same
  // transaction saw it (revision 0: not known, the answer was lost).
  RangeResult* seen_on_failure = nullptr;
  // Optional, with seen_on_failure: this key too (every key under it, with
  // also_seen_prefix), as the same transaction saw it (its kvs empty when it
  // does not exist).
  std::string also_seen_key{};
  bool also_seen_prefix = false;
  RangeResult* also_seen = nullptr;
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

  // Calls made in the next `seconds` (a waiter's: until its wait ends; 1e9
  // or more: for ever) may go on until the timeout after that time, so
  // that they ride out an outage of etcd as long as the wait; later calls
  // have the timeout from their start, as before.
  void patient_for(double seconds);

  // The endpoint the connection is (or was last) to, as HOST:PORT.
  std::string current_endpoint() const;

  // What a second connection to the member in use needs (a watch's): its
  // endpoint and, when auth is on, the token (authenticating first).
  struct Place {
    Endpoint endpoint;
    std::string authorization;
  };
  Place place();
  const Target& target() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loopkit::etcd
