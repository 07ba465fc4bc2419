// lock-release: remove a session lock that is ours, or any with --force.
#include <fmt/format.h>

#include "cli/tool.hpp"
#include "core/lock.hpp"
#include "core/lock_etcd.hpp"
#include "sys/etcd_url.hpp"

using namespace loopkit;

static const ToolInfo info{"lock-release", "remove a session lock that is ours, or any with --force", "LOCKFILE"};

namespace {  // loopkit-etcd links the tools together: each Config its own
struct Config {
  std::optional<long long> pid;
  bool force = false;
  double timeout = 5;  // etcd URLs
};
}  // namespace

static void options(cli::Options& o, Config& c) {
  o.integer("pid", "the owner process (default: the calling shell)", "PID", c.pid, 1, INT32_MAX)
      .flag("force", "remove the lock whoever holds it", c.force)
      .alias('f', "--force", c.force)
      .etcd_timeout(c.timeout);
}

static int run(Config& c, const Args& a) {
  if (a.operands.size() != 1) fail_usage(a.operands.empty() ? "missing LOCKFILE" : "expected one LOCKFILE");
  const std::string& file = lock_operand(a.operands[0]);
  cli::need_etcd(a.operands);
  const pid_t pid = cli::owner_pid(c.pid);
#if LOOPKIT_ETCD
  if (etcd::is_etcd_url(file)) {
    // the key goes only while it holds the lease read; then the lease is revoked
    etcd::Target t = etcd::parse_etcd_url(file);
    if (t.is_folder) fail_usage(fmt::format("{}: a lock is one key, not a folder (the URL ends in '/')", file));
    etcd::Client client(t, c.timeout);
    switch (etcdlock::release(client, t.key, owner_process(pid), c.force)) {
      case Released::removed: return 0;
      case Released::missing: return cli::no(describe_not_ours(file, pid, nullptr));
      case Released::not_ours: break;
    }
    LockFile holder = etcdlock::read(client, t.key, false).lock;
    return cli::no(describe_not_ours(file, pid, &holder));
  }
#endif
  // the mark tells a lock-heartbeat --every of this lock that it may end
  switch (release_lock(file, owner_process(pid), c.force, true)) {
    case Released::removed: return 0;
    case Released::missing: return cli::no(describe_not_ours(file, pid, nullptr));
    case Released::not_ours: break;
  }
  LockFile holder = read_lock_file(file);
  return cli::no(describe_not_ours(file, pid, &holder));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
