// One reused HTTP/1.1 keep-alive connection (plain or TLS) for JSON APIs,
// with a deadline on every step. Boost.Beast, Asio and OpenSSL stay inside
// http.cpp, so including this header costs nothing and a program that never
// makes an HttpConnection never initializes OpenSSL.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace loopkit {

using Deadline = std::chrono::steady_clock::time_point;

// Why a request failed, which decides what a caller may do next.
enum class HttpFailureKind {
  unreachable,  // nothing was sent (resolve, connect, TLS handshake): safe to retry elsewhere
  lost,         // sent, but the answer did not come (reset, closed, timed out): it may have acted
  garbage,      // sent, and what came back is not HTTP
};

class HttpFailure : public std::runtime_error {
public:
  HttpFailure(HttpFailureKind kind, const std::string& message, bool timed_out = false)
      : std::runtime_error(message), kind_(kind), timed_out_(timed_out) {}
  HttpFailureKind kind() const { return kind_; }
  // the deadline ran out (rather than the peer refusing or failing)
  bool timed_out() const { return timed_out_; }

private:
  HttpFailureKind kind_;
  bool timed_out_;
};

struct TlsFiles {
  std::string cacert;     // empty: the system's trusted roots
  std::string cert, key;  // client certificate, both or neither
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;
};

class HttpConnection {
public:
  explicit HttpConnection(bool tls, TlsFiles files = {});
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // POST body (JSON) to host:port; the open connection is reused when it is
  // to the same place. Throws HttpFailure; the connection is then closed.
  HttpResponse post(const std::string& host, const std::string& port, std::string_view target, std::string_view body,
                    std::string_view authorization, Deadline deadline);
  // POST, then hand each piece of a streamed answer's body to on_data until
  // it returns true; the connection is closed afterwards. Returns the status.
  unsigned post_streaming(const std::string& host, const std::string& port, std::string_view target,
                          std::string_view body, std::string_view authorization, Deadline deadline,
                          const std::function<bool(std::string_view)>& on_data);
  // A streamed answer read as it comes, for a watch held open across waits:
  // open_stream sends the request and reads the answer's header, returning
  // its status (the whole body of an answer that is not a 200 stream goes to
  // the first read). read_stream waits until `until` for more of the body,
  // appended to out: false when the time ran out with nothing new (the
  // stream stays open). Both throw HttpFailure when the stream breaks or
  // ends; the connection is then closed.
  unsigned open_stream(const std::string& host, const std::string& port, std::string_view target, std::string_view body,
                       std::string_view authorization, Deadline deadline);
  bool read_stream(std::string& out, Deadline until);
  void close();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loopkit
