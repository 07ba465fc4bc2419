// Process liveness that survives PID reuse and other users' processes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace loopkit {

// Exists (kill(pid, 0); EPERM means another user's process, alive) and is
// not a zombie (state Z or X in /proc/PID/stat: exited, not yet reaped).
bool is_pid_alive(pid_t pid);
// Field 3 of /proc/PID/stat ('R', 'S', 'Z', ...); nullopt when unknown.
std::optional<char> process_state(pid_t pid);
bool is_zombie(pid_t pid);  // state Z or X
// Field 22 of /proc/PID/stat (clock ticks after boot); nullopt when gone.
std::optional<uint64_t> process_start_time(pid_t pid);
// Whether pid is alive (as is_pid_alive) and its start time (as
// process_start_time), from one kill() and one read of /proc/PID/stat
struct ProcessLook {
  bool alive = false;
  std::optional<uint64_t> start;  // nullopt when not alive or unknown
  bool zombie = false;            // not alive: exited, not yet reaped
};
ProcessLook look_at_process(pid_t pid);
// alive (see is_pid_alive) and, when start is known, started at that time
bool is_same_process_alive(pid_t pid, std::optional<uint64_t> start);
// geteuid()'s answer without a system call: the effective user id the
// kernel passed at exec (the auxiliary vector), as no tool changes its ids.
uid_t effective_uid();
std::string boot_id();    // /proc/sys/kernel/random/boot_id, "" if unknown
std::string host_name();  // uname -n
// Wait up to seconds for pid to exit (pidfd where the kernel has it);
// true if it is gone. Returns early on a signal.
bool wait_for_exit(pid_t pid, double seconds);

}  // namespace loopkit
