#include "core/etcd/lock_etcd.hpp"

#include <unistd.h>

#include "sys/time/clock.hpp"
#include "core/lock/lock_queue.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/etcd/etcd_watch.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/proc.hpp"
#include "sys/proc/spawn.hpp"

namespace loopkit::etcdlock {

namespace {
// every heartbeat age is far younger than this: only the local rules
// (owner gone, pid reused, earlier boot) can find the lock stale
constexpr StalePolicy lease_policy{.stale_after = 1e15};
}  // namespace

Verdict judge(const LockEntry& k) {
  if (k.state != LockFile::readable) return {};
  return judge_lock(k, lease_policy);
}

bool remove_if_unchanged(etcd::Client& client, const LockKey& k) {
  etcd::Txn t;
  t.compare.push_back(etcd::Compare::of(k.key, etcd::Field::mod_revision, etcd::Relation::equal, k.revision));
  t.success.push_back(etcd::Op::remove_key(k.key));
  bool removed = client.txn(t).succeeded;
  if (removed && k.lease) client.lease_revoke(k.lease);
  return removed;
}

bool keep_alive(etcd::Client& client, int64_t lease) { return lease && client.lease_keepalive(lease).has_value(); }

namespace {
class Store;

// The lease is the session: granted at the first record stamped, kept
// alive during a wait, given back when the lock was not got.
class Session : public LockSession {
public:
  Session(Store& store, const Owner& owner) : store_(store), owner_(owner) {}
  void stamp(JsonMembers& record, int64_t now) override;
  std::optional<JsonMembers> beat(const LockEntry& held, int64_t now, std::optional<double> every) override;
  void waited() override;
  void abandon() override;
  bool release_own() override;
  int64_t revision() const override;
  void keep_in_background(const Owner& owner) override;

private:
  Store& store_;
  Owner owner_;
  int64_t lease_ = 0;
  double renewed_at_ = 0;  // monotonic: when lease_ was granted or last kept alive
};

// Every write below compares the revision read, so a look taken one round
// trip earlier is as good as a new one: the key as a failed create saw it
// (in the same transaction) serves the read that follows (try_acquire's),
// a round trip fewer for each attempt that finds the lock held.
class Store : public LockStore {
public:
  // A waiter's calls ride out an outage of etcd until its wait ends (and
  // then for --timeout); once the lock is ours, a call has --timeout alone.
  Store(const etcd::Target& target, const StoreOptions& options)
      : target_(target), options_(options), client_(target, options.timeout) {
    client_.patient_for(options.wait);
  }
  bool create(const JsonMembers& record) override {
    etcd::RangeResult now, mine;
    refused_ = false;
    if (put(record, 0, &now, &mine)) return true;
    if (now.revision) remember(now);
    if (!now.kvs.empty()) free_since_.reset();
    else if (now.revision && ticket_ && !line_open_ && !nobody_ahead_) note_refusal(mine);
    return false;
  }
  LockEntry read() override {
    if (!reuse_) remember(client_.range(target_.key));
    reuse_ = false;
    return last_;
  }
  Fd hold() override { return Fd{}; }                             // every write below compares the revision read
  bool judges_again_when_held() const override { return false; }  // a prefix's store lists many keys
  bool replace(const LockEntry& seen, const JsonMembers& record) override {
    if (!put(record, seen.revision)) return false;
    if (seen.lease) client_.lease_revoke(seen.lease);  // the old holder's, dead: its keeper has nothing left
    return true;
  }
  // A key goes with its lease: one revoke (a write) and a read where a
  // conditioned delete and a revoke would be two writes. The revoke deletes
  // the key only while it still carries that lease; a takeover's put keeps
  // the key's create revision, so a key that is still that one afterwards
  // was not ours to remove when the revoke came.
  bool remove(const LockEntry& seen) override {
    reuse_ = false;
    if (!seen.lease || seen.revision != last_.revision || !last_created_) return remove_if_unchanged(client_, seen);
    const int64_t created = last_created_;
    if (!client_.lease_revoke(seen.lease)) return false;  // gone already, and the key with it
    // the key this very process wrote, for itself (lock-acquire -- COMMAND):
    // its owner lives, so nobody judged it stale and took it over
    if (seen.revision == last_revision && seen.state == LockFile::readable && seen.record.pid == getpid()) return true;
    auto now = client_.get(target_.key);
    return !now || now->create_revision != created;
  }
  std::unique_ptr<LockSession> session(const Owner& owner) override { return std::make_unique<Session>(*this, owner); }
  std::unique_ptr<LockWatch> watch() override;
  std::unique_ptr<WaitLine> join_line() override;
  Verdict judge(const LockEntry& e, const StalePolicy&) const override { return etcdlock::judge(e); }
  std::vector<Named> list(const std::string& url, bool with_ttl) override {
    std::vector<Named> out;
    for (auto& [name, k] : read_operand(client_, url, target_, with_ttl))
      out.push_back({std::move(name), std::move(k)});
    return out;
  }
  bool was_released(const Owner&, const std::string&, bool missing) override { return missing; }
  bool tolerates_outage() const override { return true; }
  double beat_every(double) const override { return std::max(static_cast<double>(options_.ttl) / 3, 0.2); }
  double outage_limit() const override { return static_cast<double>(options_.ttl); }
  bool lost_ends_command() const override { return true; }
  std::string describe(const std::string& name, const LockEntry& e, const Verdict& v) const override {
    return etcdlock::describe(name, e, v);
  }
  // with the lease's TTL left, read now when the entry was read without it
  std::string to_json(const std::string& name, const LockEntry& e, const Verdict& v) const override {
    if (e.ttl || !e.lease) return etcdlock::to_json(name, e, v);
    LockEntry with_ttl = e;
    add_ttl(client_, with_ttl);
    return etcdlock::to_json(name, with_ttl, v);
  }

  etcd::Client& client() { return client_; }
  const etcd::Target& target() const { return target_; }
  const StoreOptions& options() const { return options_; }
  // the store's revision that the last look at the key saw: every change
  // after it is news (0: none yet)
  int64_t seen_revision() const { return seen_revision_; }
  int64_t last_revision = 0;

  // The line (EtcdLine's): whether the last attempt was refused, and then
  // how long until the line opens (a first waiter that does not come)
  bool refused() const { return refused_; }
  std::optional<double> until_line_opens() const {
    if (!refused_ || !free_since_) return std::nullopt;
    return *free_since_ + queue_grace - monotonic_seconds();
  }
  bool line_turn() {
    line_open_ = free_since_ && monotonic_seconds() - *free_since_ >= queue_grace;
    return true;  // the attempt's transaction checks the turn
  }
  void leave_line();
  // The lock is ours: no more patience (the holder's calls are bounded by
  // --timeout, its beats by its lease)
  void got_lock() { client_.patient_for(0); }

private:
  // the record's own lease (our session's, fresh): a lost answer is told
  // by value and lease alone
  bool put(const JsonMembers& record, int64_t expect_revision, etcd::RangeResult* seen = nullptr,
           etcd::RangeResult* mine = nullptr) {
    reuse_ = false;
    etcd::GuardedPut p;
    p.key = target_.key;
    p.value = lock_text(record);
    p.lease = last_lease_ = std::stoll(record_string(record, "lease"));
    p.expect_mod_revision = expect_revision;
    p.seen_on_failure = seen;
    if (ticket_) in_line(p, mine);
    auto rev = client_.put_if_unchanged(p);
    if (!rev) return false;
    last_revision = *rev;
    ticket_.reset();  // the same transaction deleted it
    got_lock();
    return true;
  }
  void in_line(etcd::GuardedPut& p, etcd::RangeResult* mine);
  void take_ticket(int64_t lease);
  void note_refusal(const etcd::RangeResult& mine);

  void remember(const etcd::RangeResult& now) {
    seen_revision_ = now.revision;
    if (now.kvs.empty()) {
      last_ = LockKey{};
      last_.key = target_.key;
    } else {
      last_ = from_kv(now.kvs.front());
    }
    last_created_ = now.kvs.empty() ? 0 : now.kvs.front().create_revision;
    reuse_ = true;
  }

  etcd::Target target_;
  StoreOptions options_;
  mutable etcd::Client client_;  // a const question (the TTL left) is a request too
  LockKey last_;                 // the key as last seen, at seen_revision_
  int64_t last_created_ = 0;     // and its create revision
  int64_t seen_revision_ = 0;
  bool reuse_ = false;  // the next read() may answer with last_ (no write since)

  // This waiter's place in line while it waits: a key beside the lock's,
  // on the session's lease (so that it goes with a waiter killed)
  struct Ticket {
    std::string key;
    int64_t lease = 0;
    int64_t created = 0;  // its create revision: the place
  };
  std::optional<Ticket> ticket_;
  int64_t last_lease_ = 0;            // the lease of the last record written
  bool refused_ = false;              // the last create found the lock free, a waiter ahead
  bool line_open_ = false;            // the next create ignores the line
  bool nobody_ahead_ = false;         // no ticket older than ours is left: the creates ignore the line
  std::optional<double> free_since_;  // monotonic: the first refusal since the lock was last seen held
};

// A ticket named by the lease it is on: one per session, and nobody else's.
// Its create revision is the put's own, the key being new. A put whose
// answer was lost (etcd restarting) is looked up, and made again while the
// ticket is not there: the key is ours alone, so a copy that commits late
// only rewrites it, and the place is read back from the key itself.
void Store::take_ticket(int64_t lease) {
  Ticket t;
  t.key = wait_ticket_key(target_.key, lease);
  t.lease = lease;
  for (int lost = 0;; ++lost) {
    try {
      t.created = client_.put(t.key, waiter_text_with_host(), lease);
      if (auto kv = lost ? client_.get(t.key) : std::nullopt) t.created = kv->create_revision;
      break;
    } catch (const etcd::OutcomeUnknown&) {
      if (auto kv = client_.get(t.key)) {
        t.created = kv->create_revision;
        break;
      }
      if (lost == 3) throw;
    }
  }
  ticket_ = std::move(t);
  nobody_ahead_ = false;  // a new place: behind the tickets made meanwhile
}

// The create goes through only while no ticket older than ours lives (the
// empty range that a vanished ticket of ours leaves fails it too, and
// note_refusal takes a new one), and takes our ticket away with it.
void Store::in_line(etcd::GuardedPut& p, etcd::RangeResult* mine) {
  try {
    if (p.lease != ticket_->lease) take_ticket(p.lease);  // the old one went with its lease
  } catch (const Error& e) {
    warn(e.what());
    ticket_.reset();  // the wait goes on out of line
    return;
  }
  p.also_remove.push_back(ticket_->key);
  if (p.expect_mod_revision != 0 || line_open_ || nobody_ahead_ || !mine) return;
  p.also.push_back(etcd::Compare::every_key_of(wait_ticket_prefix(target_.key), etcd::Field::create_revision,
                                               etcd::Relation::greater, ticket_->created - 1));
  p.also_seen_key = wait_ticket_prefix(target_.key);
  p.also_seen_prefix = true;
  p.also_seen = mine;
}

// The line as the refused create saw it: a place of ours taken again if
// ours went (deleted by hand); else whether a live waiter is ahead of ours.
// Tickets ahead whose waiters this host can tell are gone (killed with -9,
// their leases still running) are removed, each if unchanged, and are
// nobody ahead whether this removal or another waiter's takes them. Keys
// under the line's prefix that are no tickets of it (the line of a lock
// named "NAME.wait.X") are another lock's. With nobody ahead, nobody can
// come ahead (an older ticket is one made before ours): the attempts leave
// the line out, starting at once.
void Store::note_refusal(const etcd::RangeResult& line) {
  if (line.revision) {
    const std::string prefix = wait_ticket_prefix(target_.key);
    bool ours = false, ahead = false;
    for (const auto& kv : line.kvs) {
      if (kv.key == ticket_->key) {
        ours = true;
      } else if (kv.create_revision < ticket_->created && is_ticket_in_line(kv.key, prefix)) {
        if (!is_local_waiter_gone(kv.value)) {
          ahead = true;
          continue;
        }
        LockKey dead;  // no lease: the ticket alone goes, its lease runs out
        dead.key = kv.key;
        dead.revision = kv.mod_revision;
        remove_if_unchanged(client_, dead);
      }
    }
    if (!ours) return take_ticket(last_lease_);
    if (!ahead) {
      nobody_ahead_ = true;
      return;
    }
  }
  refused_ = true;
  if (!free_since_) free_since_ = monotonic_seconds();
}

void Store::leave_line() {
  refused_ = line_open_ = nobody_ahead_ = false;
  free_since_.reset();
  if (!ticket_) return;
  const std::string key = ticket_->key;
  ticket_.reset();
  try {
    client_.remove(key);
  } catch (const Error&) {
    // its lease takes it, at the latest when this process ends
  }
}

// A place in an etcd lock's line, as lock.cpp's loop sees it
class EtcdLine : public WaitLine {
public:
  explicit EtcdLine(Store& store) : store_(store) {}
  ~EtcdLine() override { store_.leave_line(); }
  bool my_turn(const std::function<bool()>&) override { return store_.line_turn(); }
  bool refused_last_attempt() const override { return store_.refused(); }

private:
  Store& store_;
};

std::unique_ptr<WaitLine> Store::join_line() {
  if (!last_lease_) return nullptr;  // no record written yet: no session to be on
  take_ticket(last_lease_);
  return std::make_unique<EtcdLine>(*this);
}

// A waiter's watch of the key from the revision its last attempt saw, so
// that it wakes one round trip after the key changes and makes no request
// meanwhile. A watch that breaks (the member went, etcd restarts) leaves
// its waiter polling at the backoff's pace, its attempts riding out the
// outage, and is opened again after the next attempt that etcd answered,
// at the member that answered it, from that attempt's revision (so that no
// change in between is missed). One that cannot start where etcd answers
// leaves its waiter polling; the attempts say what is wrong, if anything.
class KeyLockWatch : public LockWatch {
public:
  explicit KeyLockWatch(Store& store) : store_(store) {}
  bool active() const override { return !broken_; }
  bool rearm() override {
    if (broke_) broken_ = broke_ = false;  // the next wait opens it again
    return false;
  }
  bool wait(double seconds) override;
  // the lease the next record carries is kept alive after each pause
  // (Session::waited): a pause lasts at most a third of its TTL
  // A waiter the line refused looks again when the line opens, if
  // nothing changed before
  double pause(double backoff) const override {
    if (broken_) return backoff;
    const double pause = std::max(backoff, static_cast<double>(store_.options().ttl) / 3);
    if (auto opens = store_.until_line_opens()) return std::min(pause, std::max(*opens, 0.01));
    return pause;
  }

private:
  Store& store_;
  std::unique_ptr<etcd::KeyWatch> watch_;
  bool broken_ = false;  // polling
  bool broke_ = false;   // ... since a watch that was open ended
};

bool KeyLockWatch::wait(double seconds) {
  if (broken_) return false;
  try {
    if (!watch_) {
      const int64_t from = store_.seen_revision() + 1;
      watch_ = std::make_unique<etcd::KeyWatch>(store_.client(), store_.target().key, from, store_.options().timeout);
    }
    for (const double end = monotonic_seconds() + seconds;;) {
      const int64_t changed = watch_->wait(std::max(0.0, end - monotonic_seconds()));
      if (changed == 0) return false;
      if (changed > store_.seen_revision()) return true;  // else the last attempt saw it already
    }
  } catch (const std::exception&) {  // Error (exit 4), or an answer that is not etcd's
    broken_ = true;
    broke_ = watch_ != nullptr;
    watch_.reset();
    return true;  // something may have changed meanwhile: the next attempt looks
  }
}

std::unique_ptr<LockWatch> Store::watch() { return std::make_unique<KeyLockWatch>(*this); }

void Session::stamp(JsonMembers& record, int64_t) {
  if (!lease_) {
    lease_ = store_.client().lease_grant(store_.options().ttl);
    renewed_at_ = monotonic_seconds();
  }
  // the lease is the heartbeat here: a record's heartbeat would never move
  record.erase("heartbeat");
  record.erase("heartbeat_epoch");
  record.set_string("lease", std::to_string(lease_));  // as a number it would exceed what jq keeps exact
}

std::optional<JsonMembers> Session::beat(const LockEntry& held, int64_t, std::optional<double>) {
  if (lease_ && lease_ != held.lease) store_.client().lease_revoke(lease_);
  lease_ = 0;
  store_.got_lock();
  if (!keep_alive(store_.client(), held.lease)) return std::nullopt;  // ours, but its lease just ran out
  lease_ = held.lease;
  renewed_at_ = monotonic_seconds();
  store_.last_revision = held.revision;
  return held.record.fields;
}

// A long wait must not outlive the lease that the new record will carry;
// a short one (a watch's wake-up) goes on to its attempt at once, with no
// keep-alive in the way of the hand-off.
void Session::waited() {
  if (!lease_ || monotonic_seconds() - renewed_at_ < static_cast<double>(store_.options().ttl) / 3) return;
  if (!keep_alive(store_.client(), lease_)) lease_ = 0;
  renewed_at_ = monotonic_seconds();
}

void Session::abandon() { release_own(); }
bool Session::release_own() {
  if (!lease_) return false;
  store_.client().lease_revoke(lease_);  // false: it ran out, and the key went with it
  lease_ = 0;
  return true;
}

int64_t Session::revision() const { return store_.last_revision; }

// A stopped owner (SIGSTOP, ^Z, a debugger) does no work: its lease is not
// renewed for it and runs out after the TTL, as a lost network's would.
bool is_stopped(pid_t pid) {
  auto st = process_state(pid);
  return st && (*st == 'T' || *st == 't');
}

// A process in the background that keeps the lease alive every ttl/3 while
// the owner runs (alive, not stopped) and the lock is ours; it ends when
// the lock is released or lost, or when the owner dies. It never deletes
// the key of an owner that died: what the owner started may still run, and
// the key goes when the lease runs out (a contender of this host takes a
// dead owner's lock at once, and can wait for its children).
void start_keeper(const etcd::Target& target, const Owner& owner, int64_t lease, const StoreOptions& options) {
  start_detached([=] {
    StoreOptions own = options;
    own.wait = 0;  // each keep-alive rides out an outage for --timeout; the loop, while the lease may live
    Store store(target, own);
    etcd::Client& client = store.client();
    const int64_t ttl = options.ttl;
    const double every = std::max(static_cast<double>(ttl) / 3, 0.5);
    double last_ok = monotonic_seconds();
    for (;;) {
      if (wait_for_exit(owner.pid, every) || !is_owner_running(owner)) return;
      if (is_stopped(owner.pid)) continue;
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

void Session::keep_in_background(const Owner& owner) { start_keeper(store_.target(), owner, lease_, store_.options()); }
}  // namespace

std::unique_ptr<LockStore> store(const std::string& url, const StoreOptions& options, bool folder) {
  etcd::Target target = etcd::parse_etcd_url(url);
  if (target.is_folder && !folder)
    fail_usage(loopkit::format("{}: a lock is one key, not a folder (the URL ends in '/')", url));
  return std::make_unique<Store>(target, options);
}

}  // namespace loopkit::etcdlock
