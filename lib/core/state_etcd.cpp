// State documents in etcd keys: a read is one linearizable get; a change is
// the file's faithful edit applied to the value read, written back only if
// the key's mod revision has not moved, and done again from a fresh read
// when it has (another writer came first), so no update is ever lost.
#include <fmt/format.h>

#include "core/state.hpp"
#include "sys/error.hpp"
#include "sys/etcd.hpp"
#include "sys/etcd_url.hpp"

namespace loopkit {

namespace {

etcd::Target key_target(const std::string& url) {
  etcd::Target t = etcd::parse_etcd_url(url);
  if (t.is_folder)
    fail_usage(fmt::format("{}: a state document is one key, not a folder (the URL ends in '/')", quoted(url)));
  return t;
}

// Each write also stores a fresh write id here, in the same transaction, so
// that a write whose answer was lost is recognised as ours even when another
// writer put the same bytes from the same revision (two n+=1 from n=5). The
// NUL byte keeps these keys out of every folder of keys that start with '/'.
std::string write_id_key(const std::string& key) { return std::string("\0loopkit/write-id", 17) + key; }

std::optional<std::string> read_state_etcd(const std::string& url, double timeout_seconds) {
  etcd::Target t = key_target(url);
  etcd::Client client(t, timeout_seconds);
  auto kv = client.get(t.key);
  if (!kv) return std::nullopt;
  return std::move(kv->value);
}

UpdateResult update_state_etcd(const Update& u) {
  etcd::Target t = key_target(u.file);
  etcd::Client client(t, u.timeout);
  for (;;) {
    std::optional<etcd::KeyValue> kv = client.get(t.key);
    Document doc{.subject = u.file,
                 .kind = "an etcd key",
                 .missing = fmt::format("{}: no such key", quoted(u.file)),
                 .text = kv ? std::optional<std::string>(kv->value) : std::nullopt,
                 .can_back_up = true};
    UpdateResult r = update_document(u, &doc);  // --expect and --require are checked on every try
    if (!r.no.empty() || !r.written) return r;
    etcd::GuardedPut put{.key = t.key,
                         .value = r.text,
                         .lease = kv ? kv->lease : 0,  // a value set on a leased key stays leased
                         .expect_mod_revision = kv ? kv->mod_revision : 0,
                         .also = {},
                         .also_put = {},
                         .marker_key = write_id_key(t.key)};
    const std::string backup_key = t.key + ".backup";
    if (r.backup) put.also_put.emplace_back(backup_key, *r.backup);  // Atari's rule, as FILE.backup
    if (client.put_if_unchanged(put)) {
      if (r.backup && u.on_warning)
        u.on_warning(fmt::format("{}; moved it to the key {} and started again", r.backup_why, quoted(backup_key)));
      if (!u.want_text) r.text.clear();
      return r;
    }
  }
}

}  // namespace

const StateOnEtcd etcd_state{read_state_etcd, update_state_etcd};

}  // namespace loopkit
