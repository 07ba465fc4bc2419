// lock-release: remove a session lock that is ours, or any with --force.

#include "cli/tool.hpp"
#include "core/lock/lock.hpp"
#include "sys/base/etcd_url.hpp"
#include "sys/base/format.hpp"

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
  // on etcd the key goes only while it holds the revision read, then its
  // lease is revoked; on files the mark tells a lock-heartbeat --every of
  // this lock that it may end
  std::unique_ptr<LockStore> store = open_lock_store(file, {.timeout = c.timeout});
  switch (release_lock(*store, owner_process(pid), c.force, true)) {
    case Released::removed: return 0;
    case Released::missing: return cli::no(describe_not_ours(file, pid, nullptr));
    case Released::not_ours: break;
  }
  LockEntry holder = store->read();
  return cli::no(describe_not_ours(file, pid, &holder));
}

int main(int argc, char** argv) { return tool_main(info, argc, argv, options, run); }
