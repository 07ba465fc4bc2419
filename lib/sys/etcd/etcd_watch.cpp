#include "sys/etcd/etcd_watch.hpp"

#include <algorithm>
#include <boost/json.hpp>  // compiled once into the library by lib/core/json/json.cpp
#include <chrono>

#include "sys/etcd/base64.hpp"
#include "sys/etcd/etcd_codec.hpp"
#include "sys/etcd/http.hpp"

namespace loopkit::etcd {
namespace {

namespace json = boost::json;
using namespace codec;  // NOLINT: the codec is this file's vocabulary

Deadline deadline_after(double seconds) {
  using Clock = std::chrono::steady_clock;
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

KeyWatch::KeyWatch(Client& client, const std::string& key, int64_t from, double timeout_seconds) : key_(key) {
  const Target& t = client.target();
  http_ = std::make_unique<HttpConnection>(t.tls, TlsFiles{t.cacert, t.cert, t.cert_key});
  Client::Place at = client.place();
  name_ = endpoint_name(at.endpoint);
  json::object create{{"key", base64_encode(key)}, {"start_revision", number(from)}};
  std::string body = json::serialize(json::object{{"create_request", std::move(create)}});
  unsigned status = 0;
  try {
    status = http_->open_stream(at.endpoint.host, at.endpoint.port, "/v3/watch", body, at.authorization,
                                deadline_after(timeout_seconds));
  } catch (const HttpFailure& f) {
    fail(Exit::system, f.what());
  }
  if (status != 200)
    fail(Exit::system,
         "etcd at " + quoted(name_) + " refused to watch " + quoted(key) + " (HTTP " + std::to_string(status) + ")");
}

KeyWatch::~KeyWatch() = default;

int64_t KeyWatch::wait(double seconds) {
  const Deadline until = deadline_after(seconds);
  for (;;) {
    // the gateway ends each message of the stream with a newline
    int64_t last = 0;
    for (size_t newline; (newline = pending_.find('\n')) != std::string::npos;) {
      last = std::max(last, take(pending_.substr(0, newline)));
      pending_.erase(0, newline + 1);
    }
    if (last) return last;
    try {
      if (!http_->read_stream(pending_, until)) return 0;
    } catch (const HttpFailure& f) {
      fail(Exit::system, "the watch of " + quoted(key_) + " ended: " + f.what());
    }
  }
}

// One message of the stream: the latest mod revision of the key's changes
// in it, 0 for none (the watch's creation, progress notices).
int64_t KeyWatch::take(const std::string& message) {
  boost::system::error_code ec;
  json::value v = json::parse(message, ec);
  if (ec || !v.is_object()) malformed("a watch message is not a JSON object");
  const json::object& o = v.get_object();
  if (const json::value* e = o.if_contains("error")) {
    const json::value* m = e->is_object() ? e->get_object().if_contains("message") : nullptr;
    std::string said = m && m->is_string() ? std::string(m->get_string()) : "an error";
    fail(Exit::system, "etcd at " + quoted(name_) + " ended the watch of " + quoted(key_) + ": " + said);
  }
  const json::object& result = object_field(o, "result");
  if (bool_field(result, "canceled") || int_field(result, "compact_revision") > 0)
    fail(Exit::system, "etcd at " + quoted(name_) + " canceled the watch of " + quoted(key_));
  int64_t last = 0;
  for (const json::value& e : array_field(result, "events")) {
    if (!e.is_object()) malformed("a watch event is not an object");
    const json::value* kv = e.get_object().if_contains("kv");
    if (!kv) malformed("a watch event without its key");
    KeyValue changed = decode_kv(*kv);
    if (changed.key == key_) last = std::max(last, changed.mod_revision);
  }
  return last;
}

}  // namespace loopkit::etcd
