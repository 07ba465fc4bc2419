// etcd URLs as operands: etcd://HOST:PORT[,HOST:PORT...]/KEY, etcds://...
// (TLS) and etcd:///KEY (endpoints from the environment, as etcdctl takes
// them). Parsing only: no sockets, no TLS, so a file tool that merely asks
// "is this an etcd URL?" links nothing heavy.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace loopkit::etcd {

struct Endpoint {
  std::string host;  // a name, an IPv4 address or an IPv6 address without brackets
  std::string port;
};

// Where to talk, what to read, and how to prove who we are.
struct Target {
  bool tls = false;
  std::vector<Endpoint> endpoints;
  std::string key;         // with its leading slash, as etcdctl writes keys
  bool is_folder = false;  // the URL ended in '/': every key under that prefix
  // ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY: file names, empty if unset
  std::string cacert, cert, cert_key;
  // ETCDCTL_USER split at its first ':'; user empty: no authentication
  std::string user, password;
};

bool is_etcd_url(std::string_view operand);  // starts with etcd:// or etcds://

// Exit 2 for a malformed URL, endpoint list or ETCDCTL_USER. The endpoints of
// etcd:///KEY come from LOOPKIT_ETCD_ENDPOINTS, else ETCDCTL_ENDPOINTS, else
// 127.0.0.1:2379; entries there may carry http:// or https:// as etcdctl's do
// (https:// makes the connection TLS, as does etcds://).
Target parse_etcd_url(std::string_view url);

// "HOST:PORT[,HOST:PORT...]" with optional http:// or https:// prefixes and
// [IPv6] hosts; sets *tls when any entry says https://. Exit 2 if malformed.
std::vector<Endpoint> parse_endpoint_list(std::string_view list, bool* tls);

// host:port, with brackets around an IPv6 host
std::string endpoint_name(const Endpoint& e);

}  // namespace loopkit::etcd
