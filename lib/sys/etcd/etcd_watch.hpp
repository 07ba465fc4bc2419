// Watching one etcd key on a connection of its own (etcd's watch stream
// through the JSON gateway, POST /v3/watch): a waiter hears of a change one
// round trip after it was made, as `etcdctl lock` does, instead of at its
// next poll.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "sys/etcd/etcd.hpp"

namespace loopkit {
class HttpConnection;
}

namespace loopkit::etcd {

class KeyWatch {
public:
  // Watches key from revision `from` on (changes since then come at once),
  // at the member the client uses, with its credentials; timeout_seconds
  // bounds the opening. Error (exit 4) when etcd cannot be asked.
  KeyWatch(Client& client, const std::string& key, int64_t from, double timeout_seconds);
  ~KeyWatch();
  KeyWatch(const KeyWatch&) = delete;
  KeyWatch& operator=(const KeyWatch&) = delete;
  // Waits up to seconds for changes of the key: the mod revision of the
  // last one come, 0 when none came meanwhile (the time ran out, or a signal
  // came). Error (exit 4) when the watch ended: the member went or closed
  // the stream, or etcd canceled it (its history compacted).
  int64_t wait(double seconds);

private:
  int64_t take(const std::string& message);

  std::unique_ptr<HttpConnection> http_;
  std::string key_, name_;
  std::string pending_;  // the stream's bytes after its last whole message
};

}  // namespace loopkit::etcd
