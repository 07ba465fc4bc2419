// The hold: "an agent of this run still lives" answered by the kernel. A
// supervisor takes an exclusive flock(2) on a file before it starts the
// agent and lets the agent inherit the descriptor, so the lock stays taken
// for as long as any process that holds it lives (a flock belongs to the
// open file, released when its last descriptor closes), whoever of them
// dies first, kill -9 included: no window between an agent's start and its
// record. A process that closes the descriptors it inherited, or that was
// started elsewhere and handed work, is not seen.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <sys/types.h>

namespace loopkit {

// What the holder wrote into the file once it had the lock: the agent's
// process group and its leader's start time (/proc/PID/stat field 22), and
// the supervisor's parent (the engine) with its start time.
struct HoldRecord {
  pid_t pgid = 0;
  std::optional<uint64_t> pgid_start;
  pid_t parent = 0;
  std::optional<uint64_t> parent_start;
};

// Open (creating, mode 0600, no symlink followed) the hold file and take
// its lock, waiting while another holder has it; until_stop is asked every
// time the lock is found taken (it waits there, about 0.1 s) and returns
// nonzero to give up (its value returned).
// The descriptor is not closed on exec: the agent inherits it. Returns the
// descriptor (>= 0) or minus the value until_stop gave.
int take_hold(const std::string& path, const std::function<int()>& until_stop);
int open_hold(const std::string& path);
bool try_lock_hold(int fd);  // the lock taken now; false when another has it

// Write the record into the held file (replacing what it said).
void write_hold_record(int fd, const HoldRecord& record);
// The record of the file at path; nullopt when missing or not (yet) written.
std::optional<HoldRecord> read_hold_record(const std::string& path);

// Some process holds the lock of the file at path (a missing file: none).
bool is_hold_taken(const std::string& path);

// SIGKILL to every process but us with a descriptor on the file (dev, ino),
// found in /proc.
void kill_hold_holders(dev_t dev, ino_t ino);

}  // namespace loopkit
