// Supervising a command as one process group that dies with its caller, as
// timeout(1) and tini do for one process: the group gets the signals we get,
// a deadline ends it, and on Linux a parent-death signal ends it when our
// parent dies, kill -9 included.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "sys/proc/output_copy.hpp"

namespace loopkit {

struct GroupLimits {
  double timeout = 0;           // seconds before the group gets SIGTERM (0: none)
  double kill_after = 10;       // seconds from a SIGTERM to the group's SIGKILL
  std::string hold;             // a hold file (sys/proc/supervise_hold.hpp) the group holds while it lives ("": none)
  OutputLog* output = nullptr;  // the command's stdout and stderr become pipes, copied to ours and to it
};

// The shell's status of a supervised run; timed_out when the deadline ended it.
struct GroupStatus {
  int status = 0;  // exit code; 128+N if killed by signal N; 124 after the timeout; 126/127 as shells
  bool timed_out = false;
};

// Make this process the leader of a new process group, run argv (PATH
// searched) as its child in that group and wait until every member of the
// group is gone. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to us go to the
// whole group, SIGKILL follows limits.kill_after later; SIGTSTP, SIGTTIN and
// SIGTTOU stop the group and then us, SIGCONT continues it (job control
// reaches the agent as any foreground pipeline). When our parent dies
// (Linux: PR_SET_PDEATHSIG at once; elsewhere getppid() looked at every
// second) the group gets SIGTERM then SIGKILL the same way. When we die
// first, kill -9 included, a sentinel (a child in a group of its own, which
// a kill of our group or the agent's misses) sees its pipe from us close
// and ends the group the same way. Members the command leaves behind when
// it exits are ended too: the run is over only when all are gone. With
// limits.hold, the hold is taken (waited for while another has it) before
// the command starts and its record written; its descriptor stays open in
// the group, and in the sentinel until the group is gone.
// The group's id is our pid, though we leave it once the child is in it (a
// session leader, which cannot leave its group, gives the child its own).
// With limits.output, the command's stdout and stderr are two pipes (not a
// terminal) that we copy, as the output comes, to our own stdout and stderr
// and to the log (sys/proc/output_copy.hpp); SIGPIPE is ignored by us, so a
// reader of ours that went away ends only that copy. Once the group is gone
// the pipes are read for at most a second more: a process that left the
// group holding one open does not keep us.
// exec_errno: why argv could not be run (0: it ran).
GroupStatus run_group(const std::vector<std::string>& argv, const GroupLimits& limits, int& exec_errno);

// Some member of process group pgid exists; when start is known and a
// process pgid exists that started at another time, the number was reused.
bool is_group_alive(pid_t pgid, std::optional<uint64_t> start);

// SIGTERM to the group, SIGKILL kill_after seconds later; true once no
// member is left (false: some survived SIGKILL for kill_after more seconds).
bool end_group(pid_t pgid, std::optional<uint64_t> start, double kill_after);

// End whoever holds the hold file at path (sys/proc/supervise_hold.hpp): the
// recorded group (SIGTERM and SIGCONT, SIGKILL after kill_after), then any
// process still holding the file open (SIGKILL). True once its lock is free.
bool end_hold(const std::string& path, double kill_after);

}  // namespace loopkit
