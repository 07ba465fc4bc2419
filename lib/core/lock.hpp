// Session locks (man/lock-acquire.1.scd and loopkit.7.scd): JSON files
// naming their owner process, created atomically, judged live or stale,
// taken over and reaped without races. The argument for why is in
// lock.cpp, beside the code; ARCHITECTURE.md follows one race through it.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "core/json.hpp"
#include "sys/link.hpp"

namespace loopkit {

// A lock record as read: ours, an older script's (no host, pid_start or boot_id),
// or another tool's bare pid.
struct LockRecord {
  json::object fields;  // everything the file holds, in its order
  std::string session;
  pid_t pid = 0;
  std::string host;                        // "" when unknown: taken as local
  std::optional<uint64_t> pid_start;       // unknown for other tools' locks
  std::string boot_id;                     // "" when unknown
  std::optional<int64_t> heartbeat_epoch;  // heartbeat_epoch, else heartbeat, else started_at
  bool has_heartbeat = false;              // not just started_at
  std::optional<double> heartbeat_every;   // the owner's declared beat, seconds
  std::optional<pid_t> heartbeat_pid;      // the beater of lock-heartbeat --every, when not the owner
  bool bare_pid = false;
};

// Parses a lock file's text; anything that is not a lock record is exit 3.
LockRecord parse_lock_record(std::string_view text, std::string_view subject);

// What a lock file holds right now. I/O errors other than absence: exit 4.
// A lock file is never reached through a symlink at its name, and a FIFO,
// device or socket there is never read or waited on: both are exit 4 (see
// open_regular_nofollow in sys/file.hpp). A lock record is a line of JSON:
// a file longer than max_lock_bytes is read no further and is unreadable.
inline constexpr size_t max_lock_bytes = 65536;
struct LockFile {
  enum State { missing, readable, unreadable } state = missing;
  LockRecord record;    // readable
  std::string problem;  // unreadable: why
  int64_t mtime = 0;    // when it exists
  FileId id;            // when it exists: the file read, for removing only that one
  std::string text;     // the bytes read
};
LockFile read_lock_file(const std::string& path);

// The process a lock is taken, refreshed or released for.
struct Owner {
  pid_t pid = 0;
  std::optional<uint64_t> start;  // nullopt when it is not running (or a zombie)
};
Owner owner_process(pid_t pid);
// Whether a lock can be taken or refreshed for the owner: it is running,
// not a zombie, and (when its start time was read) not another process that
// has since been given its pid. A lock kept for a dead owner would be
// stale the moment it is written.
bool is_owner_running(const Owner& owner);

// Whether a lock still protects anything. Local locks (same host, or none
// named) are stale when their process is gone (or a zombie), was reused
// (other start time) or belongs to an earlier boot; any lock whose heartbeat is older
// than stale_after (default 120 s for other hosts' locks, never for local
// ones) is stale too. Unreadable files are never judged stale here.
struct StalePolicy {
  std::optional<double> stale_after;  // seconds
};
inline constexpr int64_t default_remote_stale_after = 120;
struct Verdict {
  bool stale = false;
  std::string reason;          // why stale, or "" when live
  std::optional<int64_t> age;  // seconds since the last sign of life
};
Verdict judge_lock(const LockFile& lock, const StalePolicy& policy);
bool is_lock_ours(const LockRecord& record, const Owner& owner);

// A fresh record for an owner; session, times and host filled in.
json::object new_lock_record(const std::string& session, const Owner& owner, int64_t now);

struct AcquireRequest {
  std::string session;
  Owner owner;
  StalePolicy policy;
  double wait_seconds = 0;  // retry with backoff until then
  // sleeps between retries; returning false gives up (a signal arrived)
  std::function<bool(double)> pause;
};
struct AcquireResult {
  enum Outcome { created, took_over, refreshed, held, interrupted } outcome = held;
  json::object record;  // what we wrote
  LockFile holder;      // held: who holds it
  Verdict verdict;      // took_over: why the old one was stale
};
AcquireResult acquire_lock(const std::string& path, const AcquireRequest& request);

// Refresh heartbeat and heartbeat_epoch if the lock is ours. A beater that
// keeps beating every `every` seconds records that as heartbeat_every, so
// that judge_lock never takes its live owner for stale between two beats,
// and its own pid as heartbeat_pid.
struct RefreshResult {
  // released: only from keep_heartbeat, when its owner released the lock
  enum Outcome { refreshed, not_ours, missing, released } outcome = missing;
  LockFile holder;         // not_ours: who holds it
  std::string started_at;  // refreshed: that of the record written (a bare pid file gets one then)
};
RefreshResult refresh_heartbeat(const std::string& path, const Owner& owner, int64_t now,
                                std::optional<double> every = std::nullopt);
// Refresh every `every` seconds until the owner exits (waiting on it, so
// that the loop ends as soon as it dies, not up to a beat later) or the lock
// is lost; the outcome of the last refresh, or `released` when the lock it
// refreshed was gone (or replaced) because its owner released it: the
// owner's release left the released mark (below) for it, which it removes.
// A caught SIGINT/SIGTERM (sys/interrupt.hpp) ends it between beats, never
// in the middle of one, so no temporary file is left beside the lock.
RefreshResult keep_heartbeat(const std::string& path, const Owner& owner, double every);

// Remove the lock if ours (or anyone's, forced): only the regular file that
// was read and judged under the folder's flock is unlinked; a name that
// became something else meanwhile is exit 4 and stays. With mark_released,
// an owner releasing its own lock whose beater (heartbeat_every and
// heartbeat_pid, written by refresh_heartbeat with `every`) still runs
// first leaves the lock's last text at released_mark_path, so that the
// beater can tell this normal end from a lock deleted under it.
enum class Released { removed, not_ours, missing };
Released release_lock(const std::string& path, const Owner& owner, bool force, bool mark_released = false);
// "locks/.NAME.released" for "locks/NAME": a dot file, which sweeps skip
std::string released_mark_path(const std::string& path);

// Remove the lock if it is stale when looked at under the folder's lock.
struct ReapResult {
  enum Outcome { live, stale, removed, unreadable, missing, failed } outcome = missing;
  LockFile lock;
  Verdict verdict;
  std::string error;  // failed: why the stale lock could not be removed
};
ReapResult reap_lock(const std::string& path, const StalePolicy& policy, bool dry_run);

// A lock is a file that other processes see: "-" (standard input, for the
// tools that read) names none, exit 2; "./-" is a file named "-".
const std::string& lock_operand(const std::string& operand);
// The lock files that operands name: a folder's *.lock files, or the file.
std::vector<std::string> lock_files_in(const std::vector<std::string>& operands);
// Whether operands name one lock file alone (not a folder): then the exit
// status answers for that lock, and a file that cannot be read at all (a
// link, a FIFO) is refused with exit 4; in a sweep it is a warning.
bool names_one_lock(const std::vector<std::string>& operands);
// Default session: the file name without ".lock".
std::string session_of_path(const std::string& path);

// For lock-status and lock-reap: the state (live, stale, free, unreadable),
// one human line, and one JSON object holding the lock's fields plus file,
// state, reason and age.
std::string state_name(const LockFile& lock, const Verdict& verdict);
std::string describe_lock(const std::string& file, const LockFile& lock, const Verdict& verdict);
std::string lock_json(const std::string& file, const LockFile& lock, const Verdict& verdict);
// "session 'auth', pid 123 on build-3"
std::string describe_owner(const LockRecord& record);
// "held by pid 123 on build-3 (session 'auth') since ..., last heartbeat 5s ago"
std::string describe_holder(const LockFile& lock);
// The "no" of refreshing or releasing a lock for pid: "no lock 'FILE'"
// when there is none (holder null), else "'FILE' is not ours (pid N): held
// by ..."
std::string describe_not_ours(const std::string& file, pid_t pid, const LockFile* holder);

}  // namespace loopkit
