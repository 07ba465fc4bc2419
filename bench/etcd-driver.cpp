// The raw etcd client's round trips, for bench/etcd.sh:
//   etcd-driver ENDPOINTS put-get N   N times: put a key, read it back
//   etcd-driver ENDPOINTS lock N      N times what `etcdctl lock KEY true`
//                                     does: grant a lease, create the key
//                                     with it if absent, revoke the lease
// One process, one connection, as a loopkit tool holds one per run.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "sys/base/error.hpp"
#include "sys/etcd/etcd.hpp"

using namespace loopkit::etcd;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fputs("usage: etcd-driver ENDPOINTS put-get|lock N\n", stderr);
    return 2;
  }
  std::string mode = argv[2];
  int n = std::atoi(argv[3]);
  try {
    Client c(parse_etcd_url(std::string("etcd://") + argv[1] + "/bench"));
    for (int i = 0; i < n; ++i) {
      if (mode == "put-get") {
        c.put("/bench/k", "value");
        if (!c.get("/bench/k")) return 1;
      } else if (mode == "lock") {
        int64_t lease = c.lease_grant(10);
        GuardedPut p;
        p.key = "/bench/lock";
        p.value = "{}";
        p.lease = lease;
        if (!c.put_if_unchanged(p)) return 1;
        c.lease_revoke(lease);
      } else {
        return 2;
      }
    }
  } catch (const loopkit::Error& e) {
    std::fprintf(stderr, "etcd-driver: %s\n", e.what());
    return 4;
  }
  return 0;
}
