// Lock records (man/lock-acquire.1.scd and loopkit.7.scd): the JSON a lock
// holds, naming its owner process; reading it, judging it live or stale,
// and saying who holds it. What is done with locks is in lock.hpp, over
// the store of locks of store.hpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>

#include "core/json/json_members.hpp"
#include "sys/fs/link.hpp"

namespace loopkit {

// A lock record as read: ours, an older script's (no host, pid_start or boot_id),
// or another tool's bare pid.
struct LockRecord {
  JsonMembers fields;  // everything the file holds, in its order, as its text
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
// open_regular_nofollow in sys/fs/file.hpp). A lock record is a line of JSON:
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
// listed_regular: a folder listing said path is a regular file (folder_entries)
LockFile read_lock_file(const std::string& path, bool listed_regular = false);

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
// The owner when it is running (as is_owner_running), from one look at the
// process: nullopt when it is not.
std::optional<Owner> running_owner(pid_t pid);

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
JsonMembers new_lock_record(const std::string& session, const Owner& owner, int64_t now);

// The record refreshed for a new heartbeat at `now` (a bare pid file gets a
// whole record); a beater that keeps beating every `every` seconds records
// that as heartbeat_every, and its own pid as heartbeat_pid.
JsonMembers refreshed_record(const LockFile& lock, const Owner& owner, int64_t now, std::optional<double> every);
// This host and boot as records name them (uname -n; the boot id, "" when
// unknown), each looked up once.
const std::string& this_host();
const std::string& this_boot();
// A string member of a record, "" when absent or not a string.
std::string record_string(const JsonMembers& record, std::string_view key);
// A record as a lock file's text: compact JSON and a newline.
std::string lock_text(const JsonMembers& record);

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
