#include "sys/base/etcd_url.hpp"

#include <cstdlib>

#include "sys/base/error.hpp"

namespace loopkit::etcd {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool is_port(std::string_view p) {
  if (p.empty() || p.size() > 5) return false;
  for (char c : p)
    if (c < '0' || c > '9') return false;
  long n = std::strtol(std::string(p).c_str(), nullptr, 10);
  return n >= 1 && n <= 65535;
}

// A host name or address: no spaces, slashes, commas or controls; an IPv6
// address comes in brackets.
Endpoint parse_endpoint(std::string_view item, std::string_view whole, bool* tls) {
  if (starts_with(item, "http://")) {
    item.remove_prefix(7);
  } else if (starts_with(item, "https://")) {
    item.remove_prefix(8);
    *tls = true;
  }
  while (!item.empty() && item.back() == '/') item.remove_suffix(1);  // etcdctl accepts http://h:p/
  auto bad = [&](const char* why) -> Endpoint {
    fail_usage("bad etcd endpoint " + quoted(item) + " in " + quoted(whole) + ": " + why);
  };
  Endpoint e;
  std::string_view rest;
  if (starts_with(item, "[")) {
    auto close = item.find(']');
    if (close == std::string_view::npos) bad("unclosed '['");
    e.host = item.substr(1, close - 1);
    rest = item.substr(close + 1);
    if (!starts_with(rest, ":")) bad("expected HOST:PORT");
    rest.remove_prefix(1);
  } else {
    auto colon = item.rfind(':');
    if (colon == std::string_view::npos) bad("expected HOST:PORT");
    e.host = item.substr(0, colon);
    rest = item.substr(colon + 1);
    if (e.host.find(':') != std::string::npos) bad("an IPv6 address goes in brackets");
  }
  if (e.host.empty()) bad("no host");
  for (unsigned char c : e.host)
    if (c <= ' ' || c == '/' || c == '@' || c == '?' || c == '#' || c == 0x7f) bad("not a host name");
  if (!is_port(rest)) bad("the port is not a number from 1 to 65535");
  e.port = rest;
  return e;
}

}  // namespace

bool is_etcd_url(std::string_view operand) {
  return starts_with(operand, "etcd://") || starts_with(operand, "etcds://");
}

std::vector<Endpoint> parse_endpoint_list(std::string_view list, bool* tls) {
  std::vector<Endpoint> out;
  std::string_view rest = list;
  while (true) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    if (item.empty()) fail_usage("empty etcd endpoint in " + quoted(list));
    out.push_back(parse_endpoint(item, list, tls));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

std::string endpoint_name(const Endpoint& e) {
  if (e.host.find(':') != std::string::npos) return "[" + e.host + "]:" + e.port;
  return e.host + ":" + e.port;
}

Target parse_etcd_url(std::string_view url) {
  Target t;
  std::string_view rest = url;
  if (starts_with(rest, "etcds://")) {
    t.tls = true;
    rest.remove_prefix(8);
  } else if (starts_with(rest, "etcd://")) {
    rest.remove_prefix(7);
  } else {
    fail_usage("not an etcd URL: " + quoted(url));
  }
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) fail_usage("no key in etcd URL " + quoted(url) + " (etcd://HOST:PORT/KEY)");
  std::string_view authority = rest.substr(0, slash);
  t.key = rest.substr(slash);
  if (t.key == "/") fail_usage("no key in etcd URL " + quoted(url) + " (the whole keyspace is not a folder)");
  if (t.key.find('\0') != std::string::npos) fail_usage("etcd key holds a NUL byte: " + quoted(url));
  t.is_folder = t.key.back() == '/';
  if (authority.empty()) {
    const char* list = env("LOOPKIT_ETCD_ENDPOINTS");
    if (!list) list = env("ETCDCTL_ENDPOINTS");
    t.endpoints = parse_endpoint_list(list ? list : "127.0.0.1:2379", &t.tls);
  } else {
    if (authority.find('@') != std::string_view::npos)
      fail_usage("credentials do not go in an etcd URL " + quoted(url) + ": set ETCDCTL_USER");
    t.endpoints = parse_endpoint_list(authority, &t.tls);
  }
  if (const char* v = env("ETCDCTL_CACERT")) t.cacert = v;
  if (const char* v = env("ETCDCTL_CERT")) t.cert = v;
  if (const char* v = env("ETCDCTL_KEY")) t.cert_key = v;
  if (t.cert.empty() != t.cert_key.empty()) fail_usage("ETCDCTL_CERT and ETCDCTL_KEY go together");
  if (const char* v = env("ETCDCTL_USER")) {
    std::string_view u = v;
    auto colon = u.find(':');
    if (colon == std::string_view::npos || colon == 0) fail_usage("ETCDCTL_USER must be NAME:PASSWORD");
    t.user = u.substr(0, colon);
    t.password = u.substr(colon + 1);
  }
  return t;
}

}  // namespace loopkit::etcd
