#include "sys/etcd/http.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <fcntl.h>
#include <optional>
#include <poll.h>

#include "sys/base/error.hpp"

namespace loopkit {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

std::string place(const std::string& host, const std::string& port) {
  return host.find(':') != std::string::npos ? "[" + host + "]:" + port : host + ":" + port;
}

bool is_ip_address(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

// etcd's answers are small; a range over a large folder is the biggest
constexpr uint64_t body_limit = 512u << 20;

}  // namespace

struct HttpConnection::Impl {
  bool tls;
  TlsFiles files;
  asio::io_context ioc{1};
  std::optional<ssl::context> context;  // made on first use: OpenSSL starts only then
  std::optional<beast::tcp_stream> plain;
  std::optional<beast::ssl_stream<beast::tcp_stream>> secure;
  std::string host, port;  // of the open connection, empty when none
  beast::flat_buffer buffer;
  // an open stream (open_stream): its parser, and its body parsed but not yet read
  std::optional<http::response_parser<http::string_body>> stream;
  std::string streamed;
  std::function<std::size_t(std::uint64_t, beast::string_view, error_code&)> take_piece =
      [this](std::uint64_t, beast::string_view piece, error_code&) {
        streamed.append(piece.data(), piece.size());
        return piece.size();
      };

  beast::tcp_stream& tcp_layer() { return secure ? beast::get_lowest_layer(*secure) : *plain; }

  // Runs one asynchronous step to completion; the stream's expiry enforces the deadline.
  template <class Start>
  error_code run(Start start) {
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  // A kept-alive connection the server has closed meanwhile (idle timeout,
  // restart): sending on it would lose the request and make a write's outcome
  // look unknown, so it is replaced first. Readable data alone does not count:
  // TLS 1.3 sends session tickets after the handshake.
  bool peer_has_closed() {
    pollfd p{tcp_layer().socket().native_handle(), POLLRDHUP, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
  }

  void close() {
    error_code ignored;
    if (secure) beast::get_lowest_layer(*secure).socket().close(ignored);
    if (plain) plain->socket().close(ignored);
    secure.reset();
    plain.reset();
    host.clear();
    port.clear();
    buffer.clear();
    stream.reset();
    streamed.clear();
  }

  // An open stream's bytes read so far, parsed as far as they go: its body
  // goes to `streamed`.
  void parse_buffered(const std::string& name) {
    while (stream && !stream->is_done() && buffer.size() > 0) {
      error_code ec;
      std::size_t used = stream->put(buffer.data(), ec);
      buffer.consume(used);
      if (ec == http::error::need_more) return;
      if (ec) lost(name, ec);
      if (used == 0) return;
    }
  }

  // Whether the open connection has bytes to read before `until` (TLS: or
  // has some decrypted already); false on a timeout or a signal.
  bool readable(Deadline until) {
    if (secure && SSL_pending(secure->native_handle()) > 0) return true;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    pollfd p{tcp_layer().socket().native_handle(), POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30))) > 0;
  }

  ssl::context& tls_context() {
    if (context) return *context;
    ssl::context c(ssl::context::tls_client);
    error_code ec;
    if (files.cacert.empty()) {
      c.set_default_verify_paths(ec);
    } else {
      c.load_verify_file(files.cacert, ec);
      if (ec) fail(Exit::system, "cannot load CA certificate " + quoted(files.cacert) + ": " + ec.message());
    }
    if (!files.cert.empty()) {
      c.use_certificate_chain_file(files.cert, ec);
      if (ec) fail(Exit::system, "cannot load certificate " + quoted(files.cert) + ": " + ec.message());
      c.use_private_key_file(files.key, ssl::context::pem, ec);
      if (ec) fail(Exit::system, "cannot load key " + quoted(files.key) + ": " + ec.message());
    }
    c.set_verify_mode(ssl::verify_peer);
    context.emplace(std::move(c));
    return *context;
  }

  // The connection to host:port, made again when it is to another place or
  // the peer closed it, with deadline set; returns the place's name
  std::string ready(const std::string& to_host, const std::string& to_port, Deadline deadline) {
    if (host != to_host || port != to_port || peer_has_closed()) connect(to_host, to_port, deadline);
    tcp_layer().expires_at(deadline);
    return place(to_host, to_port);
  }
  void connect(const std::string& to_host, const std::string& to_port, Deadline deadline) {
    close();
    std::string name = place(to_host, to_port);
    auto unreachable = [&](const std::string& why, bool timed_out = false) -> void {
      close();
      throw HttpFailure(HttpFailureKind::unreachable, why, timed_out);
    };
    // getaddrinfo cannot be cancelled; a numeric host never waits on it
    tcp::resolver resolver(ioc);
    error_code ec;
    auto addresses = resolver.resolve(to_host, to_port, ec);
    if (ec) unreachable("cannot resolve " + quoted(name) + ": " + ec.message());
    if (tls) {
      secure.emplace(ioc, tls_context());
    } else {
      plain.emplace(ioc);
    }
    tcp_layer().expires_at(deadline);
    ec = run([&](auto handler) { tcp_layer().async_connect(addresses, handler); });
    if (ec == beast::error::timeout) unreachable("cannot connect to " + quoted(name) + ": timed out", true);
    if (ec) unreachable("cannot connect to " + quoted(name) + ": " + ec.message());
    tcp_layer().socket().set_option(tcp::no_delay(true), ec);
    // Asio opens sockets without SOCK_CLOEXEC: a command that lock-acquire
    // runs must not inherit the connection to etcd (nor keep it open)
    ::fcntl(tcp_layer().socket().native_handle(), F_SETFD, FD_CLOEXEC);
    if (tls) {
      if (!is_ip_address(to_host)) SSL_set_tlsext_host_name(secure->native_handle(), to_host.c_str());
      secure->set_verify_callback(ssl::host_name_verification(to_host));
      ec = run([&](auto handler) { secure->async_handshake(ssl::stream_base::client, handler); });
      if (ec == beast::error::timeout) unreachable("TLS handshake with " + quoted(name) + " timed out", true);
      if (ec) unreachable("TLS handshake with " + quoted(name) + " failed: " + ec.message());
    }
    host = to_host;
    port = to_port;
  }

  template <class Stream>
  void send(Stream& stream, const std::string& name, std::string_view target, std::string_view body,
            std::string_view authorization) {
    http::request<http::string_body> req{http::verb::post, beast::string_view(target.data(), target.size()), 11};
    req.set(http::field::host, name);
    req.set(http::field::content_type, "application/json");
    if (!authorization.empty())
      req.set(http::field::authorization, beast::string_view(authorization.data(), authorization.size()));
    req.body() = body;
    req.keep_alive(true);
    req.prepare_payload();
    error_code ec = run([&](auto handler) { http::async_write(stream, req, handler); });
    // part of it may have gone out: from here on the server may act on it
    if (ec) lost(name, ec);
  }

  [[noreturn]] void lost(const std::string& name, error_code ec) {
    close();
    if (ec == beast::error::timeout)
      throw HttpFailure(HttpFailureKind::lost, "no answer from " + quoted(name) + ": timed out", true);
    if (ec.category() == error_code(http::error::end_of_stream).category() && ec != http::error::end_of_stream &&
        ec != http::error::partial_message)
      throw HttpFailure(HttpFailureKind::garbage, quoted(name) + " does not answer in HTTP: " + ec.message());
    throw HttpFailure(HttpFailureKind::lost, "connection to " + quoted(name) + " lost: " + ec.message());
  }

  template <class Fn>
  auto with_stream(Fn fn) {
    if (secure) return fn(*secure);
    return fn(*plain);
  }
};

HttpConnection::HttpConnection(bool tls, TlsFiles files) : impl_(std::make_unique<Impl>()) {
  impl_->tls = tls;
  impl_->files = std::move(files);
}

HttpConnection::~HttpConnection() { impl_->close(); }

void HttpConnection::close() { impl_->close(); }

HttpResponse HttpConnection::post(const std::string& host, const std::string& port, std::string_view target,
                                  std::string_view body, std::string_view authorization, Deadline deadline) {
  Impl& im = *impl_;
  const std::string name = im.ready(host, port, deadline);
  return im.with_stream([&](auto& stream) {
    im.send(stream, name, target, body, authorization);
    http::response_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    error_code ec = im.run([&](auto handler) { http::async_read(stream, im.buffer, parser, handler); });
    if (ec) im.lost(name, ec);
    HttpResponse r;
    r.status = parser.get().result_int();
    bool keep = parser.get().keep_alive();
    r.body = std::move(parser.get().body());
    if (!keep) im.close();
    return r;
  });
}

unsigned HttpConnection::post_streaming(const std::string& host, const std::string& port, std::string_view target,
                                        std::string_view body, std::string_view authorization, Deadline deadline,
                                        const std::function<bool(std::string_view)>& on_data) {
  Impl& im = *impl_;
  const std::string name = im.ready(host, port, deadline);
  unsigned status = im.with_stream([&](auto& stream) {
    im.send(stream, name, target, body, authorization);
    http::response_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    bool enough = false;
    auto consume = [&](std::uint64_t, beast::string_view piece, error_code&) -> std::size_t {
      if (!enough) enough = on_data(std::string_view(piece.data(), piece.size()));
      return piece.size();
    };
    parser.on_chunk_body(consume);
    error_code ec = im.run([&](auto handler) { http::async_read_header(stream, im.buffer, parser, handler); });
    if (ec) im.lost(name, ec);
    if (parser.get().result_int() != 200 || !parser.chunked()) {
      ec = im.run([&](auto handler) { http::async_read(stream, im.buffer, parser, handler); });
      if (ec) im.lost(name, ec);
      if (!parser.chunked()) enough = on_data(parser.get().body());
    }
    while (!enough && !parser.is_done()) {
      ec = im.run([&](auto handler) { http::async_read_some(stream, im.buffer, parser, handler); });
      if (ec) im.lost(name, ec);
    }
    return parser.get().result_int();
  });
  im.close();  // a stream that is still open is of no use to the next request
  return status;
}

unsigned HttpConnection::open_stream(const std::string& host, const std::string& port, std::string_view target,
                                     std::string_view body, std::string_view authorization, Deadline deadline) {
  Impl& im = *impl_;
  const std::string name = im.ready(host, port, deadline);
  return im.with_stream([&](auto& stream) {
    im.send(stream, name, target, body, authorization);
    auto& parser = im.stream.emplace();
    parser.body_limit(boost::none);  // a watch may run for days
    parser.on_chunk_body(im.take_piece);
    error_code ec = im.run([&](auto handler) { http::async_read_header(stream, im.buffer, parser, handler); });
    if (ec) im.lost(name, ec);
    unsigned status = parser.get().result_int();
    if (status != 200 || !parser.chunked()) {
      ec = im.run([&](auto handler) { http::async_read(stream, im.buffer, parser, handler); });
      if (ec) im.lost(name, ec);
      if (!parser.chunked()) im.streamed += parser.get().body();
    }
    return status;
  });
}

bool HttpConnection::read_stream(std::string& out, Deadline until) {
  Impl& im = *impl_;
  std::string name = place(im.host, im.port);
  for (;;) {
    im.parse_buffered(name);
    if (!im.streamed.empty()) {
      out += im.streamed;
      im.streamed.clear();
      return true;
    }
    if (!im.stream || im.stream->is_done()) {
      im.close();
      throw HttpFailure(HttpFailureKind::lost, "the stream from " + quoted(name) + " ended");
    }
    if (!im.readable(until)) return false;
    // bytes are there: this read returns at once
    im.tcp_layer().expires_after(std::chrono::seconds(5));
    std::size_t got = 0;
    error_code ec = im.with_stream([&](auto& stream) {
      return im.run([&](auto handler) {
        stream.async_read_some(im.buffer.prepare(1 << 16), [&got, handler](error_code e, std::size_t n) mutable {
          got = n;
          handler(e);
        });
      });
    });
    im.buffer.commit(got);
    if (ec) im.lost(name, ec);
  }
}

}  // namespace loopkit
