#include "sys/etcd/etcd.hpp"

#include <boost/json.hpp>  // compiled once into the library by lib/core/json/json.cpp
#include <chrono>
#include <csignal>
#include <thread>

#include "sys/etcd/base64.hpp"
#include "sys/etcd/etcd_codec.hpp"
#include "sys/base/format.hpp"
#include "sys/etcd/http.hpp"
#include "sys/proc/interrupt.hpp"
#include "sys/base/random.hpp"

namespace loopkit::etcd {
namespace {

using namespace codec;  // NOLINT: the codec is this file's vocabulary

namespace json = boost::json;
using Clock = std::chrono::steady_clock;

constexpr int grpc_not_found = 5, grpc_unavailable = 14, grpc_unauthenticated = 16;

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// etcd's errors that a retry may cure. Only those refused before a proposal
// leave a write surely unapplied; the others (leader changed, request timed
// out, server stopped, transport closing: all gRPC Unavailable; the
// gateway's own connection closing as etcd stops: Canceled) may come after
// it, and the write may still have committed, or may yet commit.
bool is_retryable(int code, std::string_view message, bool* ambiguous) {
  bool refused = contains(message, "no leader") || contains(message, "too many requests") ||
                 contains(message, "not capable") || contains(message, "unhealthy cluster");
  bool retryable = refused || code == grpc_unavailable || contains(message, "leader changed") ||
                   contains(message, "request timed out") || contains(message, "client connection is closing");
  *ambiguous = retryable && !refused;
  return retryable;
}

// A termination signal that the caller holds back (lock-acquire while its
// COMMAND waits) or has caught: a call stops retrying, so that the signal
// is not kept waiting for an outage to end.
bool termination_pending() {
  sigset_t pending;
  if (termination_signal()) return true;
  if (sigpending(&pending) != 0) return false;
  return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
         sigismember(&pending, SIGHUP) == 1;
}

std::string random_hex(size_t bytes) {
  std::string s;
  while (s.size() < bytes * 2) s += loopkit::format("{:016x}", random_u64());
  s.resize(bytes * 2);
  return s;
}

}  // namespace

struct Client::Impl {
  Target target;
  double timeout;
  HttpConnection http;
  size_t current = 0;        // the endpoint in use
  Deadline patient_until{};  // see Client::patient_for
  std::string token;         // from /v3/auth/authenticate, when ETCDCTL_USER is set

  Impl(const Target& t, double seconds)
      : target(t), timeout(seconds), http(t.tls, TlsFiles{t.cacert, t.cert, t.cert_key}) {
    if (target.endpoints.empty()) fail_usage("no etcd endpoint");
  }

  enum class Kind { read, write };

  std::string here() const { return endpoint_name(target.endpoints[current]); }

  // Moves to the next endpoint; after each full round, waits (doubling, at
  // most 0.5 s). False once the deadline has passed: until then an outage
  // (etcd restarting, every endpoint refusing connections) is ridden out,
  // and a wrong address fails at the deadline, with the last failure.
  bool next_endpoint(size_t& tried, Deadline deadline) {
    current = (current + 1) % target.endpoints.size();
    ++tried;
    if (termination_pending()) return false;
    size_t n = target.endpoints.size();
    if (tried % n) return Clock::now() < deadline;
    size_t round = tried / n;
    auto pause = std::chrono::milliseconds(std::min<int64_t>(50ll << std::min<size_t>(round - 1, 4), 500));
    const auto now = Clock::now();
    if (now >= deadline) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, deadline - now));
    return !termination_pending();
  }

  // A call's deadline: the timeout from now, or, for a caller that is
  // patient until some time (a waiter, until its wait ends), from then.
  Deadline call_deadline() const {
    const auto from = std::max(Clock::now(), patient_until);
    if (from == Deadline::max()) return from;
    return from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  }

  json::object call(std::string_view path, const json::object& request, Kind kind, Deadline deadline) {
    if (!target.user.empty() && token.empty() && path != "/v3/auth/authenticate") authenticate(deadline);
    std::string body = json::serialize(request);
    size_t tried = 0;
    bool reauthenticated = false;
    // what a failure that was no timeout said: the cause to name when the
    // last try, cut short by the deadline, only timed out
    std::string cause;
    while (true) {
      const Endpoint& ep = target.endpoints[current];
      std::string name = endpoint_name(ep);
      HttpResponse r;
      try {
        r = http.post(ep.host, ep.port, path, body, token, deadline);
      } catch (const HttpFailure& f) {
        if (f.kind() == HttpFailureKind::garbage) fail(Exit::system, f.what());
        if (f.kind() == HttpFailureKind::lost && kind == Kind::write)
          throw OutcomeUnknown(std::string(f.what()) + ": outcome unknown");
        if (!f.timed_out()) cause = f.what();
        if (!next_endpoint(tried, deadline)) fail(Exit::system, f.timed_out() && !cause.empty() ? cause : f.what());
        continue;
      }
      boost::system::error_code ec;
      json::value v = json::parse(r.body, ec);
      if (ec || !v.is_object()) {
        // etcd's gateway answers some refusals in plain text (a client
        // certificate with a CommonName once auth is on, say): say its words
        std::string said = printable_line(r.body, 200);
        fail(Exit::system, quoted(name) + " does not answer as etcd (HTTP " + std::to_string(r.status) + ")" +
                               (said.empty() ? "" : ": " + said));
      }
      json::object& o = v.get_object();
      if (r.status == 200 && !o.contains("error") && !o.contains("code")) return std::move(o);
      const json::value* m = o.if_contains("message");
      std::string message = m && m->is_string() ? std::string(m->get_string()) : "HTTP " + std::to_string(r.status);
      int code = static_cast<int>(int_field(o, "code"));
      std::string said = "etcd at " + quoted(name) + ": " + message;
      if (code == grpc_unauthenticated && !target.user.empty() && !reauthenticated && !token.empty()) {
        reauthenticated = true;  // tokens expire (5 minutes by default)
        token.clear();
        authenticate(deadline);
        continue;
      }
      bool ambiguous = false;
      if (is_retryable(code, message, &ambiguous)) {
        if (ambiguous && kind == Kind::write) throw OutcomeUnknown(said + ": outcome unknown");
        if (!next_endpoint(tried, deadline)) throw EtcdError(code, message, said);
        continue;
      }
      throw EtcdError(code, message, said);
    }
  }

  void authenticate(Deadline deadline) {
    json::object o =
        call("/v3/auth/authenticate", {{"name", target.user}, {"password", target.password}}, Kind::read, deadline);
    const json::value* t = o.if_contains("token");
    if (!t || !t->is_string() || t->get_string().empty()) malformed("no token from /v3/auth/authenticate");
    token = t->get_string();
  }

  RangeResult range(const std::string& key, bool prefix, int64_t revision, Deadline deadline) {
    json::object req;
    set_range(req, key, prefix);
    if (revision > 0) req["revision"] = number(revision);
    json::object o = call("/v3/kv/range", req, Kind::read, deadline);
    return RangeResult{header_revision(o), decode_kvs(o)};
  }

  std::optional<KeyValue> get(const std::string& key, int64_t revision, Deadline deadline) {
    RangeResult r = range(key, false, revision, deadline);
    if (r.kvs.empty()) return std::nullopt;
    return std::move(r.kvs.front());
  }

  TxnResult txn(const Txn& t, Deadline deadline) {
    json::object req;
    json::array compare, success, failure;
    for (const Compare& c : t.compare) compare.push_back(encode_compare(c));
    for (const Op& op : t.success) success.push_back(encode_op(op));
    for (const Op& op : t.failure) failure.push_back(encode_op(op));
    req["compare"] = std::move(compare);
    req["success"] = std::move(success);
    req["failure"] = std::move(failure);
    bool writes = false;
    for (const auto* ops : {&t.success, &t.failure})
      for (const Op& op : *ops) writes = writes || op.kind != Op::range;
    json::object o = call("/v3/kv/txn", req, writes ? Kind::write : Kind::read, deadline);
    TxnResult r;
    r.succeeded = bool_field(o, "succeeded");
    r.revision = header_revision(o);
    for (const json::value& v : array_field(o, "responses")) {
      if (!v.is_object()) malformed("a transaction's response is not an object");
      OpResult op;
      op.kvs = decode_kvs(object_field(v.get_object(), "response_range"));
      op.deleted = int_field(object_field(v.get_object(), "response_delete_range"), "deleted");
      r.results.push_back(std::move(op));
    }
    return r;
  }

  std::optional<LeaseStatus> time_to_live(int64_t id, bool keys, Deadline deadline) {
    json::object req{{"ID", number(id)}};
    if (keys) req["keys"] = true;
    json::object o = call("/v3/lease/timetolive", req, Kind::read, deadline);
    LeaseStatus s;
    s.ttl = int_field(o, "TTL");
    if (s.ttl < 0) return std::nullopt;  // etcd says -1 for a lease it does not know
    s.granted_ttl = int_field(o, "grantedTTL");
    for (const json::value& k : array_field(o, "keys")) {
      if (!k.is_string()) malformed("a lease's key is not base64");
      auto bytes = base64_decode(std::string_view(k.get_string().data(), k.get_string().size()));
      if (!bytes) malformed("a lease's key is not base64");
      s.keys.push_back(*bytes);
    }
    return s;
  }

  std::optional<Event> first_change_after(const std::string& key, int64_t after, Deadline deadline);
  std::optional<int64_t> judge_lost_put(const GuardedPut& gp, const Txn& t, const std::string& write_id,
                                        Deadline deadline);
};

// A watch from after+1 replays the key's history; it is opened only when a
// change is known to exist, so it never waits for a future one.
std::optional<Event> Client::Impl::first_change_after(const std::string& key, int64_t after, Deadline deadline) {
  RangeResult now = range(key, false, 0, deadline);
  if (!now.kvs.empty() && now.kvs.front().mod_revision <= after) return std::nullopt;
  // absent now and then too: a create-and-delete in between is not looked for
  if (now.kvs.empty() && !get(key, after, deadline)) return std::nullopt;
  json::object create{{"key", base64_encode(key)}, {"start_revision", number(after + 1)}};
  std::string body = json::serialize(json::object{{"create_request", std::move(create)}});
  std::string pending;
  std::optional<Event> found;
  std::string failure;
  auto on_data = [&](std::string_view piece) {
    pending += piece;
    size_t newline;
    while ((newline = pending.find('\n')) != std::string::npos) {
      std::string line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      boost::system::error_code ec;
      json::value v = json::parse(line, ec);
      if (ec || !v.is_object()) continue;
      const json::object& result = object_field(v.get_object(), "result");
      if (v.get_object().contains("error")) {
        failure = "etcd refused to replay the history of " + quoted(key);
        return true;
      }
      if (int_field(result, "compact_revision") > 0 || bool_field(result, "canceled")) {
        failure = "etcd has compacted the history of " + quoted(key) + " past revision " + number(after);
        return true;
      }
      for (const json::value& e : array_field(result, "events")) {
        if (!e.is_object()) malformed("a watch event is not an object");
        Event ev;
        const json::value* type = e.get_object().if_contains("type");
        ev.is_delete = type && type->is_string() && type->get_string() == "DELETE";
        ev.kv = decode_kv(e.get_object().at("kv"));
        if (ev.kv.key == key) {
          found = std::move(ev);
          return true;
        }
      }
    }
    return false;
  };
  const Endpoint& ep = target.endpoints[current];
  try {
    http.post_streaming(ep.host, ep.port, "/v3/watch", body, token, deadline, on_data);
  } catch (const HttpFailure& f) {
    if (!found) fail(Exit::system, f.what());
  }
  if (!failure.empty()) fail(Exit::system, failure);
  if (!found) fail(Exit::system, "etcd at " + quoted(here()) + " ended the history of " + quoted(key) + " early");
  return found;
}

// After a lost answer: see put_if_unchanged in the header for the argument.
std::optional<int64_t> Client::Impl::judge_lost_put(const GuardedPut& gp, const Txn& t, const std::string& write_id,
                                                    Deadline deadline) {
  std::string last;
  while (Clock::now() < deadline) {
    try {
      auto kv = get(gp.key, 0, deadline);
      bool unchanged = gp.expect_mod_revision == 0 ? !kv : kv && kv->mod_revision == gp.expect_mod_revision;
      if (unchanged) {
        TxnResult again = txn(t, deadline);
        if (again.succeeded) return again.revision;
        kv = get(gp.key, 0, deadline);
        unchanged = gp.expect_mod_revision == 0 ? !kv : kv && kv->mod_revision == gp.expect_mod_revision;
        if (unchanged) return std::nullopt;  // the key never moved: only `also` failed, for both copies
      }
      // The key has moved, so neither copy can commit from now on; ours did
      // only if it was the key's first change after the expected revision.
      int64_t base = gp.expect_mod_revision;
      if (base == 0 && kv) base = kv->create_revision - 1;  // absent until its creation
      auto change = first_change_after(gp.key, base, deadline);
      if (!change || change->is_delete) return std::nullopt;
      int64_t at = change->kv.mod_revision;
      if (!gp.marker_key.empty()) {
        auto marker = get(gp.marker_key, at, deadline);
        bool ours = marker && marker->mod_revision == at && marker->value == write_id;
        return ours ? std::optional<int64_t>(at) : std::nullopt;
      }
      bool ours = change->kv.value == gp.value && change->kv.lease == gp.lease;
      return ours ? std::optional<int64_t>(at) : std::nullopt;
    } catch (const OutcomeUnknown& e) {
      last = e.what();  // the copy was lost too: look again
    } catch (const EtcdError& e) {
      last = e.what();  // e.g. the history was compacted: nothing left to look at
      if (e.grpc_code() != grpc_unavailable) break;
    } catch (const Error& e) {
      last = e.what();  // no endpoint answered: keep trying until the deadline
      if (contains(last, "compacted")) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  throw OutcomeUnknown("cannot find out whether the write to " + quoted(gp.key) + " committed (" + last +
                       "): outcome unknown");
}

Client::Client(const Target& target, double timeout_seconds) : impl_(std::make_unique<Impl>(target, timeout_seconds)) {}
Client::~Client() = default;

std::string Client::current_endpoint() const { return impl_->here(); }

void Client::patient_for(double seconds) {
  constexpr double forever = 1e9;  // seconds: past any wait, and no overflow
  impl_->patient_until =
      seconds >= forever
          ? Deadline::max()
          : Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

Client::Place Client::place() {
  if (!impl_->target.user.empty() && impl_->token.empty()) impl_->authenticate(impl_->call_deadline());
  return {impl_->target.endpoints[impl_->current], impl_->token};
}

const Target& Client::target() const { return impl_->target; }

RangeResult Client::range(const std::string& key, bool prefix, int64_t revision) {
  return impl_->range(key, prefix, revision, impl_->call_deadline());
}

std::optional<KeyValue> Client::get(const std::string& key) { return impl_->get(key, 0, impl_->call_deadline()); }

int64_t Client::put(const std::string& key, const std::string& value, int64_t lease) {
  json::object req{{"key", base64_encode(key)}, {"value", base64_encode(value)}};
  if (lease) req["lease"] = number(lease);
  return header_revision(impl_->call("/v3/kv/put", req, Impl::Kind::write, impl_->call_deadline()));
}

int64_t Client::remove(const std::string& key, bool prefix) {
  json::object req;
  set_range(req, key, prefix);
  return int_field(impl_->call("/v3/kv/deleterange", req, Impl::Kind::write, impl_->call_deadline()), "deleted");
}

TxnResult Client::txn(const Txn& t) { return impl_->txn(t, impl_->call_deadline()); }

std::optional<int64_t> Client::put_if_unchanged(const GuardedPut& gp) {
  Txn t;
  t.compare.push_back(gp.expect_mod_revision == 0
                          ? Compare::absent(gp.key)
                          : Compare::of(gp.key, Field::mod_revision, Relation::equal, gp.expect_mod_revision));
  t.compare.insert(t.compare.end(), gp.also.begin(), gp.also.end());
  t.success.push_back(Op::put_key(gp.key, gp.value, gp.lease));
  for (const auto& [key, value] : gp.also_put) t.success.push_back(Op::put_key(key, value));
  for (const auto& key : gp.also_remove) t.success.push_back(Op::remove_key(key));
  std::string write_id;
  if (!gp.marker_key.empty()) {
    write_id = random_hex(16);
    t.success.push_back(Op::put_key(gp.marker_key, write_id));
  }
  if (gp.seen_on_failure) {
    t.failure.push_back(Op::range_key(gp.key));
    *gp.seen_on_failure = RangeResult{};
    if (gp.also_seen) {
      t.failure.push_back(Op::range_key(gp.also_seen_key, gp.also_seen_prefix));
      *gp.also_seen = RangeResult{};
    }
  }
  try {
    TxnResult r = impl_->txn(t, impl_->call_deadline());
    if (r.succeeded) return r.revision;
    if (gp.seen_on_failure && !r.results.empty())
      *gp.seen_on_failure = RangeResult{r.revision, std::move(r.results.front().kvs)};
    if (gp.also_seen && r.results.size() > 1) *gp.also_seen = RangeResult{r.revision, std::move(r.results[1].kvs)};
    return std::nullopt;
  } catch (const OutcomeUnknown&) {
    // finding out gets a timeout of its own: the lost call may have used all of its
    return impl_->judge_lost_put(gp, t, write_id, impl_->call_deadline());
  }
}

int64_t Client::lease_grant(int64_t ttl_seconds) {
  // a random id in 1..2^62: lost answers are settled by looking it up
  int64_t id = static_cast<int64_t>(random_u64() >> 2);
  if (id == 0) id = 1;
  json::object req{{"TTL", number(ttl_seconds)}, {"ID", number(id)}};
  Deadline deadline = impl_->call_deadline();
  try {
    json::object o = impl_->call("/v3/lease/grant", req, Impl::Kind::write, deadline);
    if (int_field(o, "ID") != id) malformed("granted lease " + number(int_field(o, "ID")) + ", not " + number(id));
    return id;
  } catch (const OutcomeUnknown&) {
  }
  std::string last;
  deadline = impl_->call_deadline();
  while (Clock::now() < deadline) {
    try {
      if (impl_->time_to_live(id, false, deadline)) return id;
      impl_->call("/v3/lease/grant", req, Impl::Kind::write, deadline);
      return id;
    } catch (const EtcdError& e) {
      if (contains(e.etcd_message(), "lease already exists")) return id;
      throw;
    } catch (const OutcomeUnknown& e) {
      last = e.what();
    } catch (const Error& e) {
      last = e.what();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  throw OutcomeUnknown("cannot find out whether lease " + number(id) + " was granted (" + last + "): outcome unknown");
}

std::optional<int64_t> Client::lease_keepalive(int64_t id) {
  // refreshing a lease twice is harmless: a lost answer is simply asked again
  json::object o = impl_->call("/v3/lease/keepalive", {{"ID", number(id)}}, Impl::Kind::read, impl_->call_deadline());
  int64_t ttl = int_field(object_field(o, "result"), "TTL");
  if (ttl <= 0) return std::nullopt;  // etcd answers without a TTL for a lease it no longer has
  return ttl;
}

bool Client::lease_revoke(int64_t id) {
  // revoking twice is harmless too: the second says "not found"
  try {
    impl_->call("/v3/lease/revoke", {{"ID", number(id)}}, Impl::Kind::read, impl_->call_deadline());
    return true;
  } catch (const EtcdError& e) {
    if (e.grpc_code() == grpc_not_found) return false;
    throw;
  }
}

std::optional<LeaseStatus> Client::lease_time_to_live(int64_t id, bool with_keys) {
  return impl_->time_to_live(id, with_keys, impl_->call_deadline());
}

std::optional<Event> Client::first_change_after(const std::string& key, int64_t after) {
  return impl_->first_change_after(key, after, impl_->call_deadline());
}

}  // namespace loopkit::etcd
