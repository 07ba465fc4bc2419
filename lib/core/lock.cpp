#include "core/lock.hpp"

#include <algorithm>
#include <cmath>
#include <climits>
#include <fmt/format.h>
#include <random>
#include <unistd.h>

#include "sys/clock.hpp"
#include "sys/error.hpp"
#include "sys/file.hpp"
#include "sys/folder.hpp"
#include "sys/interrupt.hpp"
#include "sys/link.hpp"
#include "sys/proc.hpp"

// Why takeover and reaping are race-free
// ---------------------------------------
// A lock file's name changes state in only these ways:
//   absent -> present   only by link() of a fully written, fsynced temporary
//                       file (link_new_file, as liblockfile does), which fails
//                       when the name exists: of many creators exactly one wins;
//   present -> present' (takeover, heartbeat, "already ours") only by rename()
//                       of a fully written temporary file over it;
//   present -> absent   (release, reap) only by unlink().
// Every rename and unlink happens while holding an exclusive flock on the
// lock's folder, after re-reading the file under that flock and deciding
// again from what it holds then. Outside the flock the name can therefore
// only appear, never change or vanish, and the decision made under the flock
// is still true when acted upon:
// - two contenders for a stale lock both fail to link(), then take the flock
//   in turn; the first replaces the lock, the second re-reads it, finds the
//   first alive and gives up. Exactly one wins.
// - a reaper re-reads under the flock; an owner's heartbeat or a takeover
//   happens wholly before (the reaper sees it and keeps the lock) or wholly
//   after (the owner finds the lock gone and says so). Nobody can link() a
//   new lock between the reaper's re-read and its unlink, as the name exists.
// Readers never need the flock: every state of the name is a whole file.
// What this cannot cover: tools that rewrite lock files without the folder's
// flock (an mv over a bare-pid file, say) can still race with a reaper.

namespace loopkit {

namespace {
const std::string& this_host() {
  static const std::string h = host_name();
  return h;
}
const std::string& this_boot() {
  static const std::string b = boot_id();
  return b;
}

bool is_local(const LockRecord& r) { return r.host.empty() || r.host == this_host(); }
bool is_earlier_boot(const LockRecord& r) {
  return is_local(r) && !r.boot_id.empty() && !this_boot().empty() && r.boot_id != this_boot();
}

std::optional<int64_t> integer_member(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end()) return std::nullopt;
  const json::value& v = it->value();
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(v.get_uint64());
  // a double out of int64's range would be undefined to convert
  if (v.is_double() && v.get_double() > -9.2e18 && v.get_double() < 9.2e18) return static_cast<int64_t>(v.get_double());
  if (v.is_string()) {  // "12345" from a shell that quoted everything
    const auto& s = v.get_string();
    if (s.empty() || s.size() > 18 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::stoll(std::string(s));
  }
  return std::nullopt;
}

// A time a record may hold: epoch seconds from 0 to max_epoch (the range
// LOOPKIT_NOW takes), a fraction dropped. Anything else (negative,
// INT64_MIN, 1e300, milliseconds) is no time at all: ages are computed only
// from times in this range, so none can overflow or make a lock ageless.
std::optional<int64_t> valid_epoch(std::optional<int64_t> t) {
  if (t && *t >= 0 && *t <= max_epoch) return t;
  return std::nullopt;
}

// a process id: a whole number from 1 to INT_MAX
std::optional<pid_t> pid_member(const json::object& o, std::string_view key) {
  auto n = integer_member(o, key);
  if (!n || *n <= 0 || *n > INT_MAX) return std::nullopt;
  return static_cast<pid_t>(*n);
}

std::string string_member(const json::object& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->value().is_string() ? std::string(it->value().get_string()) : "";
}

std::string lock_text(const json::object& record) { return json::compact(record) + "\n"; }

// The link() half of the argument above: false when the name already exists.
bool create_lock_exclusively(const std::string& path, const json::object& record) {
  // Checked first, though link() decides: a static binary's first exception
  // costs ~16M instructions (the unwinder sorts every FDE), and contenders
  // for a held lock are the common case.
  if (path_exists(path)) return false;
  auto made = link_new_file(path, lock_text(record), 0644);
  if (!made) return false;
  try {
    fsync_dir(dir_name(path));
  } catch (const Error&) {
    // The lock is ours but not durable: a failure must leave nothing behind.
    // Removing it changes an existing lock, so it happens under the flock,
    // and only if the name still stands for the file we made.
    Fd folder = lock_folder(dir_name(path));
    remove_file_if_same(path, *made);
    throw;
  }
  return true;
}

// The rename() half: only ever called holding the folder's flock. Returns
// false, writing nothing, when the lock file was deleted since it was read
// (rm takes no flock): a beat or a refresh must not bring it back.
bool replace_lock_under_flock(const std::string& path, const json::object& record, const std::string& old_text) {
  try {
    return write_file_atomic(path, lock_text(record), {.mode = 0644, .follow_symlink = false, .only_if_present = true});
  } catch (const Error&) {
    // the rename may have been made before the folder's sync failed: put
    // the old lock back (best effort), so that a failure changes nothing
    try {
      if (read_lock_file(path).text != old_text) write_file_atomic(path, old_text, {.follow_symlink = false});
    } catch (const Error&) {
    }
    throw;
  }
}

json::object refreshed_record(const LockFile& lock, const Owner& owner, int64_t now, std::optional<double> every) {
  json::object o =
      lock.record.bare_pid ? new_lock_record(std::string(lock.record.session), owner, now) : lock.record.fields;
  o["heartbeat"] = iso8601_utc(now);
  o["heartbeat_epoch"] = now;
  if (every) {
    o["heartbeat_every"] = *every;
    o["heartbeat_pid"] = getpid();  // the beater, for release_lock's mark
  }
  return o;
}
}  // namespace

LockRecord parse_lock_record(std::string_view text, std::string_view subject) {
  LockRecord r;
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) fail_data(quoted(subject) + ": empty lock file");
  auto last = text.find_last_not_of(" \t\r\n");
  std::string_view core = text.substr(first, last - first + 1);
  if (core.size() <= 9 && std::all_of(core.begin(), core.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    r.pid = static_cast<pid_t>(std::stol(std::string(core)));  // a bare pid, as `echo $$ >F` leaves
    r.bare_pid = true;
    r.fields["pid"] = r.pid;
  } else {
    json::value v = json::parse(text, subject);
    if (!v.is_object()) fail_data(quoted(subject) + ": not a lock record: not a JSON object");
    r.fields = std::move(v.as_object());
    auto pid = pid_member(r.fields, "pid");
    if (!pid) fail_data(quoted(subject) + ": not a lock record: no valid pid");
    r.pid = *pid;
    r.heartbeat_pid = pid_member(r.fields, "heartbeat_pid");
    r.session = string_member(r.fields, "session");
    r.host = string_member(r.fields, "host");
    r.boot_id = string_member(r.fields, "boot_id");
    if (auto s = integer_member(r.fields, "pid_start"); s && *s >= 0) r.pid_start = static_cast<uint64_t>(*s);
    r.heartbeat_epoch = valid_epoch(integer_member(r.fields, "heartbeat_epoch"));
    if (!r.heartbeat_epoch) r.heartbeat_epoch = valid_epoch(parse_iso8601(string_member(r.fields, "heartbeat")));
    r.has_heartbeat = r.heartbeat_epoch.has_value();
    if (const json::value* e = r.fields.if_contains("heartbeat_every"); e && e->is_number()) {
      double every = e->to_number<double>();
      if (std::isfinite(every) && every > 0 && every <= 1e9) r.heartbeat_every = every;
    }
    if (!r.heartbeat_epoch) r.heartbeat_epoch = valid_epoch(parse_iso8601(string_member(r.fields, "started_at")));
  }
  return r;
}

LockFile read_lock_file(const std::string& path) {
  LockFile f;
  auto snap = read_file_snapshot(path, max_lock_bytes);
  if (!snap) return f;
  f.mtime = snap->mtime;
  f.id = snap->id;
  f.text = std::move(snap->data);
  if (snap->too_big) {
    // /dev/zero behind a link is refused before this; a huge regular file is
    // garbage, not something to allocate for
    f.state = LockFile::unreadable;
    f.problem = fmt::format("larger than {} bytes: not a lock file", max_lock_bytes);
    return f;
  }
  try {
    f.record = parse_lock_record(f.text, path);
    f.state = LockFile::readable;
  } catch (const Error& e) {
    if (e.code() != Exit::data) throw;
    f.state = LockFile::unreadable;
    std::string prefix = quoted(path) + ": ";
    f.problem = e.what();
    if (f.problem.rfind(prefix, 0) == 0) f.problem.erase(0, prefix.size());
  }
  return f;
}

Owner owner_process(pid_t pid) {
  if (!is_pid_alive(pid)) return {pid, std::nullopt};  // a zombie has a start time, but is no owner
  return {pid, process_start_time(pid)};
}

bool is_owner_running(const Owner& owner) { return is_same_process_alive(owner.pid, owner.start); }

namespace {
// Why a local lock's owner is gone, or "" while it runs.
std::string owner_gone(const LockRecord& r) {
  if (is_earlier_boot(r)) return "taken before the host rebooted";
  if (!is_pid_alive(r.pid))
    return is_zombie(r.pid) ? fmt::format("pid {} has exited, a zombie not yet reaped", r.pid)
                            : fmt::format("pid {} is not running", r.pid);
  if (r.pid_start) {
    auto start = process_start_time(r.pid);
    if (start && *start != *r.pid_start) return fmt::format("pid {} now belongs to another process", r.pid);
  }
  return "";
}

// The limit on a heartbeat's age that applies to this lock, if any.
std::optional<double> age_limit(const LockFile& lock, const StalePolicy& policy) {
  const LockRecord& r = lock.record;
  bool readable = lock.state == LockFile::readable;
  // Other hosts' processes cannot be seen, only their heartbeats; an
  // unreadable file ages by its mtime, and only when the caller asks.
  std::optional<double> limit = policy.stale_after;
  if (!limit && readable && !is_local(r)) limit = static_cast<double>(default_remote_stale_after);
  // A live local owner that declared its beat (heartbeat_every) is late
  // only after missing three beats, whatever --stale-after says: a sweep
  // with a short limit must not reap an engine between two of its beats.
  if (limit && readable && is_local(r) && r.heartbeat_every) limit = std::max(*limit, 3 * *r.heartbeat_every);
  return limit;
}
}  // namespace

// Ages are read from the clock at each judgement (current_epoch), never
// from a time kept since start-up, and computed saturating: a heartbeat is
// within 0..max_epoch (valid_epoch), an mtime may be anything.
Verdict judge_lock(const LockFile& lock, const StalePolicy& policy) {
  Verdict v;
  if (lock.state == LockFile::missing) return v;
  const LockRecord& r = lock.record;
  bool readable = lock.state == LockFile::readable;
  v.age = age_between(current_epoch(), readable && r.heartbeat_epoch ? *r.heartbeat_epoch : lock.mtime);
  if (readable && is_local(r)) v.reason = owner_gone(r);
  std::optional<double> limit = v.reason.empty() ? age_limit(lock, policy) : std::nullopt;
  if (limit && static_cast<double>(*v.age) > *limit)
    v.reason = readable ? fmt::format("no heartbeat for {}s (over {}s)", *v.age, *limit)
                        : fmt::format("unreadable and unchanged for {}s (over {}s)", *v.age, *limit);
  // a heartbeat from further ahead than the limit is no sign of life either:
  // a record dated in year 9999 must not keep a lock for ever (an mtime
  // ahead of a LOOPKIT_NOW in the past is no such sign)
  else if (limit && readable && r.heartbeat_epoch && static_cast<double>(*v.age) < -*limit)
    v.reason = fmt::format("heartbeat {}s in the future (over {}s)", -*v.age, *limit);
  v.stale = !v.reason.empty();
  return v;
}

bool is_lock_ours(const LockRecord& r, const Owner& owner) {
  if (!is_local(r) || is_earlier_boot(r) || r.pid != owner.pid) return false;
  return !r.pid_start || !owner.start || *r.pid_start == *owner.start;
}

json::object new_lock_record(const std::string& session, const Owner& owner, int64_t now) {
  json::object o;
  o["session"] = session;
  o["pid"] = owner.pid;
  o["host"] = this_host();
  if (owner.start) o["pid_start"] = *owner.start;
  o["started_at"] = iso8601_utc(now);
  o["heartbeat"] = iso8601_utc(now);
  o["heartbeat_epoch"] = now;
  if (!this_boot().empty()) o["boot_id"] = this_boot();
  return o;
}

namespace {
// One attempt: create, or decide about the existing lock under the flock.
// The record is made at each attempt: one made when a wait began would be
// as old as the wait the moment it is written, stale at once for anyone
// with a --stale-after shorter than that.
AcquireResult try_acquire(const std::string& path, const AcquireRequest& req) {
  AcquireResult res;
  for (;;) {
    const json::object mine = new_lock_record(req.session, req.owner, current_epoch());
    if (create_lock_exclusively(path, mine)) {
      res.outcome = AcquireResult::created;
      res.record = mine;
      return res;
    }
    Fd folder = lock_folder(dir_name(path));
    LockFile held = read_lock_file(path);
    if (held.state == LockFile::missing) continue;  // released meanwhile: create it afresh
    if (held.state == LockFile::readable && is_lock_ours(held.record, req.owner)) {
      res.outcome = AcquireResult::refreshed;
      res.record = refreshed_record(held, req.owner, current_epoch(), std::nullopt);
      if (!replace_lock_under_flock(path, res.record, held.text)) continue;  // deleted meanwhile
      return res;
    }
    res.verdict = judge_lock(held, req.policy);
    if (!res.verdict.stale) {
      res.outcome = AcquireResult::held;
      res.holder = std::move(held);
      return res;
    }
    res.outcome = AcquireResult::took_over;
    res.record = mine;
    if (!replace_lock_under_flock(path, mine, held.text)) continue;  // deleted meanwhile
    return res;
  }
}
}  // namespace

// No lock operation resolves symlinks: a lock file reached through a link
// (planted in a shared folder, say) is refused by read_lock_file with exit 4,
// and link(), rename() and unlink() act on the name itself, never its target.
AcquireResult acquire_lock(const std::string& path, const AcquireRequest& req) {
  make_dirs(dir_name(path));
  const double deadline = monotonic_seconds() + req.wait_seconds;
  // Jittered exponential backoff, so waiters spread out instead of
  // stampeding the folder's flock at the same instants.
  std::minstd_rand jitter(static_cast<unsigned>(getpid()) ^
                          static_cast<unsigned>(static_cast<uint64_t>(monotonic_seconds() * 1e6)));
  double backoff = 0.01;
  for (;;) {
    AcquireResult res = try_acquire(path, req);
    double left = deadline - monotonic_seconds();
    if (res.outcome != AcquireResult::held || left <= 0) return res;
    double nap = std::min(left, backoff * (0.5 + static_cast<double>(jitter() % 1000) / 1000.0));
    if (req.pause) {
      if (!req.pause(nap)) {
        res.outcome = AcquireResult::interrupted;
        return res;
      }
    } else {
      sleep_seconds(nap);
    }
    backoff = std::min(backoff * 2, 0.5);
  }
}

RefreshResult refresh_heartbeat(const std::string& path, const Owner& owner, int64_t now, std::optional<double> every) {
  RefreshResult res;
  // A lock that is missing or not ours now cannot become ours behind our
  // back, so only a "yes" needs the flock and a second look.
  res.holder = read_lock_file(path);
  if (res.holder.state == LockFile::missing) return res;
  if (res.holder.state != LockFile::readable || !is_lock_ours(res.holder.record, owner)) {
    res.outcome = RefreshResult::not_ours;
    return res;
  }
  Fd folder = lock_folder(dir_name(path));
  res.holder = read_lock_file(path);
  if (res.holder.state == LockFile::missing) return res;
  if (res.holder.state != LockFile::readable || !is_lock_ours(res.holder.record, owner)) {
    res.outcome = RefreshResult::not_ours;
    return res;
  }
  json::object written = refreshed_record(res.holder, owner, now, every);
  if (!replace_lock_under_flock(path, written, res.holder.text)) {
    res.holder = LockFile{};  // deleted since it was read: missing
    return res;
  }
  res.outcome = RefreshResult::refreshed;
  res.started_at = string_member(written, "started_at");
  return res;
}

std::string released_mark_path(const std::string& path) {
  std::string dir = dir_name(path);
  return (dir == "." && path.find('/') == std::string::npos ? "" : dir + "/") + "." + base_name(path) + ".released";
}

namespace {
// Whether the owner released the lock taken at taken_at (its started_at):
// the mark its release left names that lock. The mark is removed then, best
// effort; one that cannot be read (a link planted there) is no mark.
bool take_released_mark(const std::string& path, const Owner& owner, const std::string& taken_at) {
  try {
    const std::string mark = released_mark_path(path);
    LockFile m = read_lock_file(mark);
    if (m.state != LockFile::readable || !is_lock_ours(m.record, owner) ||
        string_member(m.record.fields, "started_at") != taken_at)
      return false;
    remove_file_if_same(mark, m.id);
    return true;
  } catch (const Error&) {
    return false;
  }
}
}  // namespace

RefreshResult keep_heartbeat(const std::string& path, const Owner& owner, double every) {
  std::optional<std::string> taken_at;  // started_at of the lock last refreshed
  for (;;) {
    RefreshResult r = refresh_heartbeat(path, owner, current_epoch(), every);
    if (r.outcome == RefreshResult::refreshed) {
      taken_at = r.started_at;
    } else if (taken_at && take_released_mark(path, owner, *taken_at)) {
      r.outcome = RefreshResult::released;
      return r;
    }
    if (r.outcome != RefreshResult::refreshed || termination_signal() || wait_for_exit(owner.pid, every) ||
        termination_signal() || !is_same_process_alive(owner.pid, owner.start))
      return r;
  }
}

namespace {
// Unlink what was read under the folder's flock, and nothing else.
bool remove_lock_read(const std::string& path, const LockFile& lock) {
  switch (remove_file_if_same(path, lock.id)) {
    case Removal::removed: return true;
    case Removal::missing: return false;
    case Removal::changed: break;
  }
  fail(Exit::system, "cannot remove " + quoted(path) + ": it was replaced while being checked");
}
}  // namespace

Released release_lock(const std::string& path, const Owner& owner, bool force, bool mark_released) {
  LockFile lock = read_lock_file(path);
  if (lock.state == LockFile::missing) return Released::missing;
  auto ours = [&](const LockFile& l) { return l.state == LockFile::readable && is_lock_ours(l.record, owner); };
  if (!force && !ours(lock)) return Released::not_ours;
  Fd folder = lock_folder(dir_name(path));
  lock = read_lock_file(path);  // forced too: only a file looked at under the flock goes
  if (lock.state == LockFile::missing) return Released::missing;
  if (!force && !ours(lock)) return Released::not_ours;
  // Written before the unlink, so that a beater that finds the lock gone
  // finds the mark too. Only a hint: not synced, and a failure to write it
  // (a link planted at its name, a full disk) leaves the beater to say
  // "no lock" as for a lock deleted under it, never stops the release.
  // Only for a beater of its own (not the owner beating for itself, as
  // lock-acquire -- COMMAND does) still running: one stopped first leaves
  // no mark behind.
  const auto& beater = lock.record.heartbeat_pid;
  if (mark_released && ours(lock) && lock.record.heartbeat_every && beater && *beater != lock.record.pid &&
      is_pid_alive(*beater)) {
    try {
      write_file_atomic(released_mark_path(path), lock.text, {.mode = 0644, .sync = false, .follow_symlink = false});
    } catch (const Error&) {
    }
  }
  return remove_lock_read(path, lock) ? Released::removed : Released::missing;
}

namespace {
ReapResult look_for_reaping(const std::string& path, const StalePolicy& policy) {
  ReapResult res;
  res.lock = read_lock_file(path);
  if (res.lock.state == LockFile::missing) return res;
  res.verdict = judge_lock(res.lock, policy);
  // An unreadable file may be another tool's lock caught half-written: it
  // goes only once unchanged (by mtime) for longer than stale_after, which
  // judge_lock counts for it only when the caller gave one.
  if (res.lock.state == LockFile::unreadable && !res.verdict.stale) {
    res.outcome = ReapResult::unreadable;
    return res;
  }
  res.outcome = res.verdict.stale ? ReapResult::stale : ReapResult::live;
  return res;
}
}  // namespace

ReapResult reap_lock(const std::string& path, const StalePolicy& policy, bool dry_run) {
  // The first look is without the flock, cheap for the many live locks; a
  // stale verdict is reached again under the flock before anything goes.
  ReapResult res = look_for_reaping(path, policy);
  if (res.outcome != ReapResult::stale || dry_run) return res;
  try {
    Fd folder = lock_folder(dir_name(path));
    res = look_for_reaping(path, policy);
    if (res.outcome == ReapResult::stale)
      res.outcome = remove_lock_read(path, res.lock) ? ReapResult::removed : ReapResult::missing;
  } catch (const Error& e) {
    res.outcome = ReapResult::failed;
    res.error = e.what();
  }
  return res;
}

const std::string& lock_operand(const std::string& operand) {
  if (operand == "-") fail_usage("a lock cannot be '-' (standard input): name its file ('./-' for one named '-')");
  return operand;
}

std::vector<std::string> lock_files_in(const std::vector<std::string>& operands) {
  std::vector<std::string> files;
  for (const auto& op : operands) {
    if (!is_folder(lock_operand(op))) {
      files.push_back(op);
      continue;
    }
    std::string prefix = op == "." ? "" : op.back() == '/' ? op : op + "/";
    for (auto& name : list_folder(op, ".lock")) files.push_back(prefix + name);
  }
  return files;
}

bool names_one_lock(const std::vector<std::string>& operands) {
  return operands.size() == 1 && !is_folder(operands[0]);
}

std::string session_of_path(const std::string& path) {
  std::string name = base_name(path);
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".lock") == 0) name.resize(name.size() - 5);
  return name;
}

std::string state_name(const LockFile& lock, const Verdict& verdict) {
  if (lock.state == LockFile::missing) return "free";
  if (verdict.stale) return "stale";
  return lock.state == LockFile::unreadable ? "unreadable" : "live";
}

namespace {
std::string pid_on_host(const LockRecord& r) {
  return r.host.empty() ? fmt::format("pid {}", r.pid) : fmt::format("pid {} on {}", r.pid, r.host);
}
}  // namespace

std::string describe_owner(const LockRecord& r) {
  return r.session.empty() ? pid_on_host(r) : fmt::format("session {}, {}", quoted(r.session), pid_on_host(r));
}

std::string describe_lock(const std::string& file, const LockFile& lock, const Verdict& verdict) {
  std::string state = state_name(lock, verdict);
  std::string line = file + ": " + state;
  if (verdict.stale) line += " (" + verdict.reason + ")";
  if (lock.state == LockFile::unreadable)
    return line + (verdict.stale ? ": " : " (") + lock.problem + (verdict.stale ? "" : ")");
  if (lock.state == LockFile::missing) return line;
  line += ", " + describe_owner(lock.record);
  if (lock.record.heartbeat_epoch && verdict.age)
    line += fmt::format(", {} {}s ago", lock.record.has_heartbeat ? "heartbeat" : "no heartbeat, taken",
                        std::max<int64_t>(0, *verdict.age));
  else line += ", no heartbeat";
  return line;
}

std::string lock_json(const std::string& file, const LockFile& lock, const Verdict& verdict) {
  json::object o = lock.state == LockFile::readable ? lock.record.fields : json::object();
  o["file"] = file;
  o["state"] = state_name(lock, verdict);
  if (verdict.stale) o["reason"] = verdict.reason;
  else if (lock.state == LockFile::unreadable) o["reason"] = lock.problem;
  if (verdict.stale && lock.state == LockFile::unreadable) o["problem"] = lock.problem;
  if (verdict.age) o["age"] = *verdict.age;
  return json::compact(o);
}

std::string describe_not_ours(const std::string& file, pid_t pid, const LockFile* holder) {
  if (!holder) return fmt::format("no lock {}", quoted(file));
  return fmt::format("{} is not ours (pid {}): {}", quoted(file), pid, describe_holder(*holder));
}

std::string describe_holder(const LockFile& lock) {
  if (lock.state == LockFile::missing) return "nobody holds it now";
  if (lock.state != LockFile::readable) return "held by an unknown owner (" + lock.problem + ")";
  const LockRecord& r = lock.record;
  std::string s = "held by " + pid_on_host(r);
  if (!r.session.empty()) s += " (session " + quoted(r.session) + ")";
  std::string since = string_member(r.fields, "started_at");
  if (!since.empty()) s += " since " + since;
  if (r.heartbeat_epoch)
    s +=
        fmt::format(", last heartbeat {}s ago", std::max<int64_t>(0, age_between(current_epoch(), *r.heartbeat_epoch)));
  return s;
}

}  // namespace loopkit
