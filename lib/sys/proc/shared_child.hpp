// Children that start in our own memory (clone(2) with CLONE_VM, as
// posix_spawn starts its child): no page tables are copied at the start and
// none torn down at the end, and we take no copy-on-write fault afterwards.
// A fork of a static tool costs ~0.1 ms of CPU more on a VM; agent-run
// starts two children a run (issue 36). Internal to sys/proc/supervise.
#pragma once
#include <cstddef>
#include <sys/types.h>

namespace loopkit {

// The stack a shared child runs on, and a copy of its argument at the
// stack's far end: memory that is the child's alone, which we never write
// again (a child that outlives us still finds it as it was).
struct SharedChild {
  pid_t pid = -1;
  void* area = nullptr;
  size_t size = 0;
  void* arg = nullptr;  // the copy fn got
};

// Starts fn on a copy of arg_size bytes of arg, in a child with its own
// descriptor table, signal handlers and mask (copies of ours), but our
// memory: fn and what it calls must not allocate, take a lock or write
// anything but its stack and its argument (a malloc of ours may be half
// done, or we may be dead), and may write errno only where no other user of
// our memory can be reading it. fn's value is the child's exit status
// (returned: _exit, a noreturn call, has AddressSanitizer check the
// child's stack against our thread's, and warn).
// until_exec: we go on only once the child has exec'd or exited
// (CLONE_VFORK; it may then write its argument for us to read). stack:
// bytes beside the argument. pid -1 and errno when no child could be made.
SharedChild start_shared_child(int (*fn)(void*), const void* arg, size_t arg_size, size_t stack, bool until_exec);

// A child may run beside us in our memory (until_exec false): not under
// valgrind, which follows clone(2) only as fork, vfork or a thread, and
// stops the program at any other.
bool may_share_memory_long();

// The child's stack and argument unmapped: only once it has exec'd or been
// reaped.
void free_shared_child(SharedChild& c);

}  // namespace loopkit
