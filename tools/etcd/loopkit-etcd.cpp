// loopkit-etcd: the tools that take etcd URLs, built with the etcd client.
// The tools on PATH are built without it (its start-up would cost every
// call on a file) and hand a call that names an etcd URL to this program,
// installed in libexec/loopkit, with argv[0] naming the tool (cli::need_etcd
// in lib/cli/tool.hpp). Each tool's source is compiled again for it with
// LOOPKIT_ETCD=1 and its main renamed (CMakeLists.txt, LOOPKIT_ETCD_TOOLS).
#include <cstdio>
#include <string_view>

#include "cli/tool.hpp"
#include "core/etcd/lock_etcd.hpp"
#include "core/state/state.hpp"
#include "core/state/store.hpp"

int loopkit_etcd_state_get(int argc, char** argv);
int loopkit_etcd_state_set(int argc, char** argv);
int loopkit_etcd_lock_acquire(int argc, char** argv);
int loopkit_etcd_lock_heartbeat(int argc, char** argv);
int loopkit_etcd_lock_release(int argc, char** argv);
int loopkit_etcd_lock_status(int argc, char** argv);
int loopkit_etcd_lock_reap(int argc, char** argv);

namespace {

struct Tool {
  std::string_view name;
  int (*main)(int, char**);
};

constexpr Tool tools[] = {
    {"state-get", loopkit_etcd_state_get},       {"state-set", loopkit_etcd_state_set},
    {"lock-acquire", loopkit_etcd_lock_acquire}, {"lock-heartbeat", loopkit_etcd_lock_heartbeat},
    {"lock-release", loopkit_etcd_lock_release}, {"lock-status", loopkit_etcd_lock_status},
    {"lock-reap", loopkit_etcd_lock_reap},
};

}  // namespace

int main(int argc, char** argv) {
  loopkit::cli::etcd_built_in = true;
  loopkit::state_on_etcd = &loopkit::etcd_state;  // the etcd halves of the state tools
  loopkit::document_store_on_etcd = &loopkit::etcd_document_store;
  loopkit::lock_store_on_etcd = &loopkit::etcdlock::store;  // ... and of the lock tools
  std::string_view name = argc > 0 ? argv[0] : "";
  name = name.substr(name.rfind('/') + 1);
  for (const Tool& t : tools)
    if (t.name == name) return t.main(argc, argv);
  std::fputs("loopkit-etcd: not a command of its own: state-get, state-set and the lock tools run it for etcd URLs\n",
             stderr);
  return 2;
}
