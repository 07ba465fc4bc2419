// lib/sys/etcd, etcd_url, http, base64. The [etcd] cases run against real
// etcd processes started by tests/etcd/etcd-sandbox (free loopback ports, a
// scratch data folder, stopped by pid); they are hidden from the plain unit
// run and have a CTest entry of their own ("unit-tests [etcd]").
#include <arpa/inet.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <netinet/in.h>
#include <poll.h>
#include <csignal>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/lock/lock_queue.hpp"
#include "sys/etcd/base64.hpp"
#include "sys/base/error.hpp"
#include "sys/etcd/etcd.hpp"
#include "sys/base/etcd_url.hpp"
#include "scratch.hpp"

using namespace loopkit;
using namespace loopkit::etcd;

namespace {

// CMake names the source folder: __FILE__ is relative under ccache's base_dir
std::string source_dir() { return LOOPKIT_SOURCE_DIR; }

std::string shell_output(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int status = pclose(p);
  INFO(command << "\n" << out);
  REQUIRE(status == 0);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// Sets (or unsets, for nullptr) environment variables for one scope.
class EnvScope {
public:
  EnvScope(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
      if (value) setenv(name, value, 1);
      else unsetenv(name);
    }
  }
  ~EnvScope() {
    for (auto& [name, value] : saved_)
      if (value) setenv(name.c_str(), value->c_str(), 1);
      else unsetenv(name.c_str());
  }

private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

struct ScratchFolder : testing::Scratch {
  ScratchFolder() : testing::Scratch("etcd-test") {}
};

// etcd members on loopback, stopped (by pid) and deleted when this goes out
// of scope, and by the sandbox's watcher if this process dies first.
struct Sandbox {
  ScratchFolder scratch;
  std::string dir, endpoints, tls_dir;
  explicit Sandbox(int members = 1, std::string tls = "") : tls_dir(std::move(tls)) {
    dir = scratch.dir + "/etcd";
    std::string env = tls_dir.empty() ? "" : "ETCD_SANDBOX_TLS='" + tls_dir + "' ";
    endpoints = shell_output(env + script() + " start '" + dir + "' " + std::to_string(members) + " " +
                             std::to_string(getpid()));
  }
  ~Sandbox() { (void)!std::system((script() + " stop '" + dir + "'").c_str()); }
  static std::string script() {
    std::string s = "'";
    s += source_dir();
    s += "/tests/etcd/etcd-sandbox'";
    return s;
  }
  std::string url(const std::string& key) const { return (tls_dir.empty() ? "etcd://" : "etcds://") + endpoints + key; }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    size_t start = 0;
    while (true) {
      size_t comma = endpoints.find(',', start);
      out.push_back(endpoints.substr(start, comma - start));
      if (comma == std::string::npos) return out;
      start = comma + 1;
    }
  }
  int leader() const { return std::stoi(shell_output(script() + " leader '" + dir + "'")); }
  void kill(int member) const { shell_output(script() + " kill '" + dir + "' " + std::to_string(member)); }
};

// A listening socket on a free loopback port, each connection handed to serve
// in turn; serve returns when it is done with that connection.
class TestServer {
public:
  explicit TestServer(std::function<void(int client, const std::atomic<bool>& stopping)> serve) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(listen(fd_, 16) == 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = std::to_string(ntohs(a.sin_port));
    thread_ = std::thread([this, serve] {
      while (true) {
        int c = accept(fd_, nullptr, nullptr);
        if (c < 0) return;
        serve(c, stopping_);
        close(c);
      }
    });
  }
  ~TestServer() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    close(fd_);
  }
  std::string endpoint() const { return "127.0.0.1:" + port_; }

private:
  int fd_;
  std::string port_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

int connect_to(const std::string& endpoint) {
  auto colon = endpoint.rfind(':');
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(endpoint.substr(colon + 1))));
  inet_pton(AF_INET, endpoint.substr(0, colon).c_str(), &a.sin_addr);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  return fd;
}

// One HTTP message (request or unary answer) read whole from fd.
std::string read_http_message(int fd) {
  std::string m;
  char buf[4096];
  size_t head_end = std::string::npos;
  while (true) {
    if (head_end == std::string::npos && (head_end = m.find("\r\n\r\n")) != std::string::npos) head_end += 4;
    if (head_end != std::string::npos) {
      std::string head = m.substr(0, head_end);
      for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto cl = head.find("content-length:");
      if (cl != std::string::npos && m.size() >= head_end + std::stoul(head.substr(cl + 15))) return m;
      if (head.find("chunked") != std::string::npos && m.find("\r\n0\r\n\r\n", head_end - 2) != std::string::npos)
        return m;
    }
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return m;
    m.append(buf, static_cast<size_t>(n));
  }
}

void write_all(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = write(fd, s.data(), s.size());
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

// Copies bytes both ways between the client and etcd until one side closes.
void pump(int client, int upstream, const std::atomic<bool>& stopping) {
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  char buf[16384];
  while (!stopping) {
    if (poll(fds, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) return;
      write_all(fds[1 - i].fd, std::string_view(buf, static_cast<size_t>(n)));
    }
  }
}

// A proxy in front of etcd whose first connection loses its first exchange:
// drop_request closes before passing the request on, drop_answer passes it
// on and closes without passing the answer back. on_drop runs meanwhile.
enum class Loss { drop_request, drop_answer };
struct LossyProxy {
  std::atomic<int> connections{0};
  std::function<void()> on_drop = [] {};
  TestServer server;
  LossyProxy(const std::string& etcd, Loss loss)
      : server([this, etcd, loss](int client, const std::atomic<bool>& stopping) {
          int upstream = connect_to(etcd);
          if (connections++ == 0) {
            std::string request = read_http_message(client);
            if (loss == Loss::drop_answer) {
              write_all(upstream, request);
              read_http_message(upstream);
            }
            on_drop();
          } else {
            pump(client, upstream, stopping);
          }
          close(upstream);
        }) {}
};

Target target_of(const std::string& url) { return parse_etcd_url(url); }

GuardedPut guarded(std::string key, std::string value, int64_t expect, std::string marker = "") {
  GuardedPut p;
  p.key = std::move(key);
  p.value = std::move(value);
  p.expect_mod_revision = expect;
  p.marker_key = std::move(marker);
  return p;
}

int exit_of(const std::function<void()>& fn, std::string* message = nullptr) {
  try {
    fn();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return static_cast<int>(e.code());
  }
  return 0;
}

}  // namespace

TEST_CASE("base64 round trips and rejects what etcd never sends", "[etcd_url]") {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x80z", 4)})
    CHECK(base64_decode(base64_encode(s)) == s);
  CHECK(base64_encode("/lk/a") == "L2xrL2E=");
  CHECK_FALSE(base64_decode("abc"));
  CHECK_FALSE(base64_decode("ab=c"));
  CHECK_FALSE(base64_decode("a==="));
  CHECK_FALSE(base64_decode("ab!d"));
}

TEST_CASE("etcd URLs name endpoints, a key and whether it is a folder", "[etcd_url]") {
  EnvScope env{{"LOOPKIT_ETCD_ENDPOINTS", nullptr}, {"ETCDCTL_ENDPOINTS", nullptr}, {"ETCDCTL_USER", nullptr},
               {"ETCDCTL_CACERT", nullptr},         {"ETCDCTL_CERT", nullptr},      {"ETCDCTL_KEY", nullptr}};
  Target t = parse_etcd_url("etcd://h1:2379,10.0.0.2:2380/lk/locks/a");
  CHECK_FALSE(t.tls);
  REQUIRE(t.endpoints.size() == 2);
  CHECK(endpoint_name(t.endpoints[0]) == "h1:2379");
  CHECK(endpoint_name(t.endpoints[1]) == "10.0.0.2:2380");
  CHECK(t.key == "/lk/locks/a");
  CHECK_FALSE(t.is_folder);

  t = parse_etcd_url("etcds://[::1]:2379/lk/locks/");
  CHECK(t.tls);
  CHECK(t.endpoints[0].host == "::1");
  CHECK(endpoint_name(t.endpoints[0]) == "[::1]:2379");
  CHECK(t.is_folder);

  t = parse_etcd_url("etcd:///k");
  CHECK(endpoint_name(t.endpoints.at(0)) == "127.0.0.1:2379");
  {
    EnvScope e{{"ETCDCTL_ENDPOINTS", "http://a:1,https://b:2/"}};
    t = parse_etcd_url("etcd:///k");
    CHECK(t.tls);  // an https:// endpoint asks for TLS, as etcdctl
    CHECK(endpoint_name(t.endpoints.at(1)) == "b:2");
    EnvScope l{{"LOOPKIT_ETCD_ENDPOINTS", "c:3"}};
    t = parse_etcd_url("etcd:///k");
    CHECK(endpoint_name(t.endpoints.at(0)) == "c:3");
    CHECK(t.endpoints.size() == 1);
  }
  {
    EnvScope e{{"ETCDCTL_USER", "root:pa:ss"}, {"ETCDCTL_CACERT", "/ca.pem"}};
    t = parse_etcd_url("etcd://h:1/k");
    CHECK(t.user == "root");
    CHECK(t.password == "pa:ss");
    CHECK(t.cacert == "/ca.pem");
  }
  CHECK(is_etcd_url("etcd:///x"));
  CHECK(is_etcd_url("etcds://h:1/x"));
  CHECK_FALSE(is_etcd_url("etcd:/x"));
  CHECK_FALSE(is_etcd_url("state.json"));
}

TEST_CASE("malformed etcd URLs are usage errors", "[etcd_url]") {
  EnvScope env{{"LOOPKIT_ETCD_ENDPOINTS", nullptr}, {"ETCDCTL_ENDPOINTS", nullptr}, {"ETCDCTL_USER", nullptr}};
  for (const char* url :
       {"etcd://h:1", "etcd://h:1/", "etcd://h/k", "etcd://h:0/k", "etcd://h:99999/k", "etcd://h:x/k", "etcd://:1/k",
        "etcd://h:1,/k", "etcd://::1:2379/k", "etcd://[::1/k", "etcd://u:p@h:1/k", "http://h:1/k"}) {
    INFO(url);
    CHECK(exit_of([&] { parse_etcd_url(url); }) == 2);
  }
  EnvScope user{{"ETCDCTL_USER", "nopassword"}};
  CHECK(exit_of([&] { parse_etcd_url("etcd://h:1/k"); }) == 2);
}

TEST_CASE("a prefix's range end is the next key after every key it starts", "[etcd_url]") {
  CHECK(prefix_range_end("/a/") == "/a0");
  CHECK(prefix_range_end("a\xff") == "b");
  CHECK(prefix_range_end("\xff") == std::string(1, '\0'));
}

TEST_CASE("put, get, range over a prefix and remove", "[.etcd][etcd]") {
  Sandbox etcd;
  Client c(target_of(etcd.url("/t")));
  CHECK_FALSE(c.get("/t/a"));
  int64_t r1 = c.put("/t/a", "one");
  int64_t r2 = c.put("/t/b", std::string("two\0bytes", 9));
  c.put("/t0", "outside");
  CHECK(r2 == r1 + 1);
  auto a = c.get("/t/a");
  REQUIRE(a);
  CHECK(a->value == "one");
  CHECK(a->create_revision == r1);
  CHECK(a->mod_revision == r1);
  CHECK(a->version == 1);
  CHECK(a->lease == 0);
  RangeResult all = c.range("/t/", true);
  REQUIRE(all.kvs.size() == 2);
  CHECK(all.kvs[1].value == std::string("two\0bytes", 9));
  CHECK(all.revision == r2 + 1);
  c.put("/t/a", "uno");
  a = c.get("/t/a");
  CHECK(a->version == 2);
  CHECK(a->create_revision == r1);                             // an overwrite keeps the creation
  CHECK(c.range("/t/a", false, r1).kvs.at(0).value == "one");  // history
  CHECK(c.remove("/t/", true) == 2);
  CHECK(c.range("/t/", true).kvs.empty());
  CHECK(c.get("/t0"));
}

TEST_CASE("a transaction compares and takes one branch", "[.etcd][etcd]") {
  Sandbox etcd;
  Client c(target_of(etcd.url("/k")));
  Txn create;
  create.compare = {Compare::absent("/k")};
  create.success = {Op::put_key("/k", "mine")};
  create.failure = {Op::range_key("/k")};
  TxnResult first = c.txn(create);
  CHECK(first.succeeded);
  TxnResult second = c.txn(create);
  CHECK_FALSE(second.succeeded);  // the gateway omits "succeeded": false
  REQUIRE(second.results.size() == 1);
  REQUIRE(second.results[0].kvs.size() == 1);
  CHECK(second.results[0].kvs[0].mod_revision == first.revision);  // the fencing token

  Txn cas;
  cas.compare = {Compare::of("/k", Field::mod_revision, Relation::equal, first.revision),
                 Compare::value_is("/k", Relation::equal, "mine")};
  cas.success = {Op::put_key("/k", "next"), Op::remove_key("/other")};
  TxnResult swapped = c.txn(cas);
  CHECK(swapped.succeeded);
  CHECK(swapped.results.size() == 2);
  CHECK_FALSE(c.txn(cas).succeeded);  // the revision moved
  Txn greater;
  greater.compare = {Compare::of("/k", Field::version, Relation::greater, 1)};
  greater.success = {Op::range_key("/k")};
  TxnResult g = c.txn(greater);
  CHECK(g.succeeded);
  CHECK(g.results.at(0).kvs.at(0).value == "next");

  Txn both;  // etcd refuses a put and a delete of one key in one transaction
  both.success = {Op::remove_key("/k"), Op::put_key("/k", "x")};
  std::string message;
  CHECK(exit_of([&] { c.txn(both); }, &message) == 4);
  CHECK_THAT(message, Catch::Contains("duplicate key given in txn request"));
}

TEST_CASE("put_if_unchanged writes only over the revision it read", "[.etcd][etcd]") {
  Sandbox etcd;
  Client c(target_of(etcd.url("/n")));
  GuardedPut p = guarded("/n", "1", 0);
  auto r1 = c.put_if_unchanged(p);
  REQUIRE(r1);
  CHECK_FALSE(c.put_if_unchanged(p));  // exists now
  p.value = "2";
  p.expect_mod_revision = *r1;
  auto r2 = c.put_if_unchanged(p);
  REQUIRE(r2);
  CHECK(*r2 > *r1);
  CHECK_FALSE(c.put_if_unchanged(p));  // stale revision
  CHECK(c.get("/n")->value == "2");
}

TEST_CASE("leases: grant, keep alive, revoke, expire", "[.etcd][etcd]") {
  Sandbox etcd;
  Client c(target_of(etcd.url("/l")));
  int64_t lease = c.lease_grant(2);
  CHECK(lease > 0);
  auto status = c.lease_time_to_live(lease);
  REQUIRE(status);
  CHECK(status->granted_ttl == 2);
  c.put("/l/held", "x", lease);
  CHECK(c.get("/l/held")->lease == lease);
  CHECK(c.lease_time_to_live(lease, true)->keys == std::vector<std::string>{"/l/held"});
  CHECK(c.lease_keepalive(lease) == 2);

  // without keep-alives it runs out (etcd's expiry has a 500 ms granularity)
  bool expired = false;
  for (int i = 0; i < 100 && !expired; ++i) {
    expired = !c.lease_time_to_live(lease);
    if (!expired) usleep(100000);
  }
  CHECK(expired);
  CHECK_FALSE(c.get("/l/held"));
  CHECK_FALSE(c.lease_keepalive(lease));  // 200 without a TTL: lost
  CHECK_FALSE(c.lease_revoke(lease));

  int64_t other = c.lease_grant(60);
  CHECK(other != lease);
  c.put("/l/again", "y", other);
  CHECK(c.lease_revoke(other));
  CHECK_FALSE(c.get("/l/again"));
  CHECK_FALSE(c.lease_keepalive(other));
  std::string message;
  CHECK(exit_of([&] { c.put("/l/late", "z", other); }, &message) == 4);
  CHECK_THAT(message, Catch::Contains("requested lease not found"));
}

TEST_CASE("a refused first endpoint fails over to the next", "[.etcd][etcd]") {
  Sandbox etcd;
  TestServer closed([](int, const std::atomic<bool>&) {});  // listens, then the port is freed
  std::string refused;
  {
    TestServer gone([](int, const std::atomic<bool>&) {});
    refused = gone.endpoint();
  }
  Client c(target_of("etcd://" + refused + "," + etcd.endpoints + "/k"));
  c.put("/k", "v");
  CHECK(c.current_endpoint() == etcd.endpoints);
  CHECK(c.get("/k")->value == "v");
}

TEST_CASE("unreachable or wrong endpoints are exit 4 with a clear message", "[.etcd][etcd]") {
  std::string refused;
  {
    TestServer gone([](int, const std::atomic<bool>&) {});
    refused = gone.endpoint();
  }
  std::string message;
  Client c(target_of("etcd://" + refused + "/k"), 2);
  CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
  CHECK(message == "cannot connect to '" + refused + "': Connection refused");
  CHECK(exit_of([&] { c.put("/k", "v"); }, &message) == 4);  // nothing was sent: not "outcome unknown"
  CHECK_THAT(message, Catch::Contains("Connection refused"));

  Client nowhere(target_of("etcd://no-such-host.invalid:2379/k"), 2);
  CHECK(exit_of([&] { nowhere.get("/k"); }, &message) == 4);
  CHECK_THAT(message, Catch::StartsWith("cannot resolve 'no-such-host.invalid:2379'"));
}

TEST_CASE("a server that does not speak HTTP, or not etcd, is exit 4", "[.etcd][etcd]") {
  std::string message;
  TestServer garbage([](int client, const std::atomic<bool>&) {
    read_http_message(client);
    write_all(client, "SSH-2.0-OpenSSH_9.2\r\n\r\n");
  });
  Client g(target_of("etcd://" + garbage.endpoint() + "/k"), 2);
  CHECK(exit_of([&] { g.get("/k"); }, &message) == 4);
  CHECK(message == "'" + garbage.endpoint() + "' does not answer in HTTP: bad version");
  CHECK(exit_of([&] { g.put("/k", "v"); }, &message) == 4);
  CHECK_THAT(message, Catch::Contains("does not answer in HTTP"));

  TestServer web([](int client, const std::atomic<bool>&) {
    read_http_message(client);
    write_all(client, "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nContent-Type: text/html\r\n\r\n<html/>\r\n");
  });
  Client w(target_of("etcd://" + web.endpoint() + "/k"), 2);
  CHECK(exit_of([&] { w.get("/k"); }, &message) == 4);
  CHECK(message == "'" + web.endpoint() + "' does not answer as etcd (HTTP 404): <html/>");
}

TEST_CASE("a write whose answer is lost is outcome unknown, a read is retried", "[.etcd][etcd]") {
  std::atomic<int> requests{0};
  TestServer silent([&](int client, const std::atomic<bool>&) {
    read_http_message(client);
    ++requests;  // and close without answering
  });
  Client c(target_of("etcd://" + silent.endpoint() + "/k"), 1);
  std::string message;
  CHECK(exit_of([&] { c.put("/k", "v"); }, &message) == 4);
  CHECK_THAT(message, Catch::EndsWith(": outcome unknown"));
  CHECK(requests == 1);  // never sent twice
  CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
  CHECK(requests > 2);
  CHECK_THAT(message, Catch::StartsWith("connection to '" + silent.endpoint() + "' lost"));
  requests = 0;
  GuardedPut p = guarded("/k", "v", 0);
  CHECK(exit_of([&] { c.put_if_unchanged(p); }, &message) == 4);  // cannot find out either
  CHECK_THAT(message, Catch::StartsWith("cannot find out whether the write to '/k' committed"));
  CHECK_THAT(message, Catch::EndsWith("outcome unknown"));
  CHECK(requests >= 2);
}

TEST_CASE("a lost answer to a committed write is found and not applied twice", "[.etcd][etcd]") {
  Sandbox etcd;
  Client direct(target_of(etcd.url("/n")));
  int64_t base = direct.put("/n", "5");
  bool marker = GENERATE(false, true);
  LossyProxy proxy(etcd.endpoints, Loss::drop_answer);
  Client c(target_of("etcd://" + proxy.server.endpoint() + "/n"));
  GuardedPut p = guarded("/n", "6", base);
  if (marker) p.marker_key = "/marks/n";
  auto r = c.put_if_unchanged(p);
  REQUIRE(r);
  auto now = direct.get("/n");
  CHECK(now->value == "6");
  CHECK(now->version == 2);  // written once
  CHECK(now->mod_revision == *r);
  CHECK(proxy.connections >= 2);
}

TEST_CASE("a write lost before etcd saw it is sent again, once", "[.etcd][etcd]") {
  Sandbox etcd;
  Client direct(target_of(etcd.url("/n")));
  int64_t base = direct.put("/n", "5");
  LossyProxy proxy(etcd.endpoints, Loss::drop_request);
  Client c(target_of("etcd://" + proxy.server.endpoint() + "/n"));
  auto r = c.put_if_unchanged(guarded("/n", "6", base));
  REQUIRE(r);
  CHECK(direct.get("/n")->version == 2);
  CHECK(direct.get("/n")->mod_revision == *r);
}

TEST_CASE("the same value written by another is not taken for ours when marked", "[.etcd][etcd]") {
  Sandbox etcd;
  Client direct(target_of(etcd.url("/n")));
  int64_t base = direct.put("/n", "5");
  LossyProxy proxy(etcd.endpoints, Loss::drop_request);
  // while our request is lost, another writer makes the same n=6 from n=5
  proxy.on_drop = [&] {
    Client other(target_of(etcd.url("/n")));
    GuardedPut theirs = guarded("/n", "6", base, "/marks/n");
    CHECK(other.put_if_unchanged(theirs));
  };
  Client c(target_of("etcd://" + proxy.server.endpoint() + "/n"));
  CHECK_FALSE(c.put_if_unchanged(guarded("/n", "6", base, "/marks/n")));
  CHECK(direct.get("/n")->version == 2);
}

TEST_CASE("a lost lease grant is granted once", "[.etcd][etcd]") {
  Sandbox etcd;
  auto loss = GENERATE(Loss::drop_request, Loss::drop_answer);
  LossyProxy proxy(etcd.endpoints, loss);
  Client c(target_of("etcd://" + proxy.server.endpoint() + "/l"));
  int64_t lease = c.lease_grant(30);
  Client direct(target_of(etcd.url("/l")));
  auto status = direct.lease_time_to_live(lease);
  REQUIRE(status);
  CHECK(status->granted_ttl == 30);
}

TEST_CASE("TLS with a CA and a client certificate made by openssl", "[.etcd][etcd]") {
  ScratchFolder certs;
  const std::string& d = certs.dir;
  std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
  shell_output("cd '" + d +
               "' && exec 2>&1 && "
               "openssl req -x509 " +
               ec +
               " -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=loopkit-test-ca && "
               "openssl req " +
               ec +
               " -keyout server-key.pem -out server.csr -subj /CN=localhost && "
               "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' >san && "
               "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 "
               "-extfile san -out server.pem && "
               "openssl req " +
               ec +
               " -keyout client-key.pem -out client.csr -subj /CN=root && "
               "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 "
               "-out client.pem && cp ca.pem client-ca.pem");
  Sandbox etcd(1, d);
  std::string message;
  {
    EnvScope env{{"ETCDCTL_CACERT", (d + "/ca.pem").c_str()},
                 {"ETCDCTL_CERT", (d + "/client.pem").c_str()},
                 {"ETCDCTL_KEY", (d + "/client-key.pem").c_str()}};
    Client c(target_of(etcd.url("/k")));
    c.put("/k", "over tls");
    CHECK(c.get("/k")->value == "over tls");
  }
  {
    // without the CA, the server's certificate is not trusted
    EnvScope env{{"ETCDCTL_CACERT", nullptr}, {"ETCDCTL_CERT", nullptr}, {"ETCDCTL_KEY", nullptr}};
    Client c(target_of(etcd.url("/k")), 2);
    CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
    CHECK_THAT(message, Catch::Contains("TLS handshake with '" + etcd.endpoints + "' failed"));
    CHECK_THAT(message, Catch::Contains("certificate verify failed"));
  }
  {
    // plain HTTP to a TLS port
    Client c(target_of("etcd://" + etcd.endpoints + "/k"), 2);
    CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
  }
}

TEST_CASE("ETCDCTL_USER authenticates, a wrong password is exit 4", "[.etcd][etcd]") {
  Sandbox etcd;
  shell_output("ETCDCTL_API=3 etcdctl --endpoints " + etcd.endpoints +
               " user add root:secret 2>&1 >/dev/null && "
               "ETCDCTL_API=3 etcdctl --endpoints " +
               etcd.endpoints + " auth enable 2>&1 >/dev/null");
  std::string message;
  {
    EnvScope env{{"ETCDCTL_USER", "root:secret"}};
    Client c(target_of(etcd.url("/k")));
    c.put("/k", "authenticated");
    CHECK(c.get("/k")->value == "authenticated");
  }
  {
    EnvScope env{{"ETCDCTL_USER", "root:wrong"}};
    Client c(target_of(etcd.url("/k")));
    CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
    CHECK_THAT(message, Catch::Contains("authentication failed"));
  }
  {
    EnvScope env{{"ETCDCTL_USER", nullptr}};
    Client c(target_of(etcd.url("/k")));
    CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
    CHECK_THAT(message, Catch::Contains("user name is empty"));
  }
}

TEST_CASE("a 3-member cluster loses its leader mid-run and keeps every acknowledged write", "[.etcd][etcd]") {
  Sandbox etcd(3);
  // the leader first, so that the writes in flight go to the member that dies
  std::vector<std::string> members = etcd.list();
  int leader = etcd.leader();
  std::string list = members[leader - 1];
  for (size_t i = 0; i < members.size(); ++i)
    if (static_cast<int>(i) != leader - 1) list += "," + members[i];
  std::atomic<int> acknowledged{0}, unknown{0};
  std::vector<std::string> written;
  std::string failure;
  // n += 1 by guarded writes, and a new key per round, from another thread
  // while this one kills the leader after the first 20 rounds
  std::thread writer([&] {
    try {
      Client c(target_of("etcd://" + list + "/c"));
      for (int i = 0; i < 60; ++i) {
        bool done = false;
        for (int tries = 0; tries < 100 && !done; ++tries) {
          auto kv = c.get("/c/n");
          int n = kv ? std::stoi(kv->value) : 0;
          try {
            if (c.put_if_unchanged(guarded("/c/n", std::to_string(n + 1), kv ? kv->mod_revision : 0, "/c-marks/n"))) {
              ++acknowledged;
              done = true;
            }
          } catch (const OutcomeUnknown&) {
            ++unknown;
            done = true;
          }
        }
        if (!done) throw std::runtime_error("no increment after 100 tries");
        std::string key = "/c/k" + std::to_string(i);
        try {
          c.put(key, "v");
          written.push_back(key);
        } catch (const OutcomeUnknown&) {
          ++unknown;
        }
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  while (acknowledged < 20 && failure.empty()) usleep(1000);
  etcd.kill(leader);
  writer.join();
  REQUIRE(failure == "");
  Client after(target_of(etcd.url("/c")));
  int n = std::stoi(after.get("/c/n")->value);
  INFO("acknowledged " << acknowledged << ", unknown " << unknown << ", n " << n);
  CHECK(n >= acknowledged);
  CHECK(n <= acknowledged + unknown);
  CHECK(acknowledged >= 50);
  for (const auto& key : written) CHECK(after.get(key));
}

TEST_CASE("a lost answer whose history was compacted away is outcome unknown", "[.etcd][etcd]") {
  Sandbox etcd;
  Client direct(target_of(etcd.url("/n")));
  int64_t base = direct.put("/n", "5");
  LossyProxy proxy(etcd.endpoints, Loss::drop_answer);
  // ours committed, then another writer moved on and the history went
  proxy.on_drop = [&] {
    Client other(target_of(etcd.url("/n")));
    int64_t later = other.put("/n", "7");
    shell_output("ETCDCTL_API=3 etcdctl --endpoints " + etcd.endpoints + " compact " + std::to_string(later) +
                 " >/dev/null");
  };
  Client c(target_of("etcd://" + proxy.server.endpoint() + "/n"));
  std::string message;
  CHECK(exit_of([&] { c.put_if_unchanged(guarded("/n", "6", base)); }, &message) == 4);
  CHECK_THAT(message, Catch::Contains("compacted"));
  CHECK_THAT(message, Catch::EndsWith("outcome unknown"));
}

TEST_CASE("a kept-alive connection the server closed is replaced before a write", "[.etcd][etcd]") {
  std::atomic<int> served{0};
  // answers one request per connection as etcd answers a put, then hangs up
  // (the flag is raised after close: loopback delivers the FIN within close)
  std::unique_ptr<TestServer> server = std::make_unique<TestServer>([&](int client, const std::atomic<bool>&) {
    read_http_message(client);
    std::string body = R"({"header":{"revision":"7"}})";
    write_all(client, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body);
    shutdown(client, SHUT_RDWR);
    ++served;
  });
  Client c(target_of("etcd://" + server->endpoint() + "/k"), 2);
  CHECK(c.put("/k", "v") == 7);
  while (served < 1) usleep(1000);
  CHECK(c.put("/k", "v") == 7);  // not "outcome unknown"
  // the server counts after its close, which may come after our read
  for (int i = 0; i < 10000 && served < 2; ++i) usleep(1000);
  CHECK(served == 2);
}

TEST_CASE("a server that never answers fails the call at its timeout", "[.etcd][etcd]") {
  TestServer hanging([](int client, const std::atomic<bool>& stopping) {
    read_http_message(client);
    while (!stopping) usleep(10000);
  });
  Client c(target_of("etcd://" + hanging.endpoint() + "/k"), 0.5);
  std::string message;
  auto start = std::chrono::steady_clock::now();
  CHECK(exit_of([&] { c.get("/k"); }, &message) == 4);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(message == "no answer from '" + hanging.endpoint() + "': timed out");
  CHECK(took >= 0.5);
  CHECK(took < 3);
  CHECK(exit_of([&] { c.put("/k", "v"); }, &message) == 4);
  CHECK(message == "no answer from '" + hanging.endpoint() + "': timed out: outcome unknown");
}

TEST_CASE("the sandbox stops its members when its owner dies", "[.etcd][etcd]") {
  ScratchFolder scratch;
  pid_t owner = fork();
  if (owner == 0) {
    pause();
    _exit(0);
  }
  std::string dir = scratch.dir + "/etcd";
  shell_output(Sandbox::script() + " start '" + dir + "' 1 " + std::to_string(owner) + " >/dev/null");
  pid_t member = std::stoi(shell_output("cat '" + dir + "/pid.1'"));
  CHECK(kill(member, 0) == 0);
  kill(owner, SIGKILL);
  waitpid(owner, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {  // the watcher looks once a second
    gone = kill(member, 0) != 0;
    if (!gone) usleep(100000);
  }
  CHECK(gone);
  (void)!std::system((Sandbox::script() + " stop '" + dir + "'").c_str());
}

// The line of waiters (lock_etcd.cpp) leans on this: a compare over a range
// holds only when every key in it holds it, and an empty range is compared
// as one absent key (create revision 0), so it fails "greater than N >= 0".
TEST_CASE("a compare over a prefix holds for every key of it; an empty range is one absent key", "[.etcd][etcd]") {
  Sandbox etcd;
  Client c(target_of(etcd.url("/q")));
  const auto oldest_from = [&](int64_t revision) {
    Txn t;
    t.compare = {Compare::every_key_of("/q/.a.wait.", Field::create_revision, Relation::greater, revision - 1)};
    return c.txn(t).succeeded;
  };
  CHECK_FALSE(oldest_from(1));
  const int64_t first = c.put("/q/.a.wait.1", "1");
  c.put("/q/.a.wait/", "beyond the range");
  const int64_t second = c.put("/q/.a.wait.2", "2");
  CHECK(oldest_from(first));
  CHECK_FALSE(oldest_from(second));  // the first is older
  c.remove("/q/.a.wait.1");
  CHECK(oldest_from(second));

  // with the key's range, the removes of a guarded put, and a second key
  // seen when a condition failed
  GuardedPut p = guarded("/q/a", "lock", 0);
  p.also = {Compare::every_key_of("/q/.a.wait.", Field::create_revision, Relation::greater, second)};
  p.also_remove = {"/q/.a.wait.2"};
  RangeResult lock, ticket;
  p.seen_on_failure = &lock;
  p.also_seen_key = "/q/.a.wait.2";
  p.also_seen = &ticket;
  CHECK_FALSE(c.put_if_unchanged(p));
  CHECK(lock.revision > 0);
  CHECK(lock.kvs.empty());
  REQUIRE(ticket.kvs.size() == 1);
  CHECK(ticket.kvs[0].create_revision == second);
  p.also = {Compare::every_key_of("/q/.a.wait.", Field::create_revision, Relation::greater, second - 1)};
  REQUIRE(c.put_if_unchanged(p));
  CHECK_FALSE(c.get("/q/.a.wait.2"));
  CHECK(c.get("/q/a")->value == "lock");
}

TEST_CASE("an etcd lock's tickets: named by lease beside the key, and told from locks", "[etcd_url]") {
  CHECK(loopkit::wait_ticket_prefix("/p/q/a") == "/p/q/.a.wait.");
  CHECK(loopkit::wait_ticket_prefix("a") == ".a.wait.");
  CHECK(loopkit::wait_ticket_key("/p/a", 0x1f) == "/p/.a.wait.000000000000001f");
  CHECK(loopkit::is_wait_ticket_key(loopkit::wait_ticket_key("/p/a", 0x3fffffffffffffff)));
  CHECK(loopkit::is_wait_ticket_key(".a.wait.0123456789abcdef"));
  CHECK_FALSE(loopkit::is_wait_ticket_key("/p/a"));
  CHECK_FALSE(loopkit::is_wait_ticket_key("/p/a.wait.0123456789abcdef"));   // no dot first: a lock
  CHECK_FALSE(loopkit::is_wait_ticket_key("/p/.a.wait.0123456789ABCDEF"));  // never written so
  CHECK_FALSE(loopkit::is_wait_ticket_key("/p/.a.wait.000000000001"));      // a lock file's ticket number
  CHECK_FALSE(loopkit::is_wait_ticket_key("/p/.wait.0123456789abcdef"));
  CHECK_FALSE(loopkit::is_wait_ticket_key("/p/.a.wait.0123456789abcdef/b"));
  // a line's own tickets, told from the line of lock "a.wait.x" under the same prefix
  const std::string line = loopkit::wait_ticket_prefix("/p/a");
  CHECK(loopkit::is_ticket_in_line(loopkit::wait_ticket_key("/p/a", 0x1f), line));
  CHECK_FALSE(loopkit::is_ticket_in_line(loopkit::wait_ticket_key("/p/a.wait.x", 0x1f), line));
  CHECK_FALSE(loopkit::is_ticket_in_line(loopkit::wait_ticket_key("/p/a.wait.1", 0x1f), line));
  CHECK(loopkit::is_wait_ticket_key(loopkit::wait_ticket_key("/p/a.wait.1", 0x1f)));  // a ticket all the same
  CHECK_FALSE(loopkit::is_ticket_in_line("/p/.a.wait.0123456789abcdef0", line));
  CHECK_FALSE(loopkit::is_ticket_in_line("/p/.a.wait.0123456789ABCDEF", line));
  CHECK_FALSE(loopkit::is_ticket_in_line("/q/.a.wait.0123456789abcdef", line));
}
