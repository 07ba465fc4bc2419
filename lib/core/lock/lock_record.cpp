// Lock records: parsing, owner liveness, verdicts, and the words that say
// who holds a lock (lock_record.hpp).
#include "core/lock/lock_record.hpp"

#include <algorithm>
#include <climits>
#include <charconv>
#include <cmath>
#include <unistd.h>

#include "core/json/utf8.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/decimal.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/base/format.hpp"
#include "sys/proc/proc.hpp"

namespace loopkit {

// as a record holds it: JSON is UTF-8 text, and a host name of other bytes
// (which sethostname allows) is written and compared in the one form
const std::string& this_host() {
  static const std::string h = json::to_utf8(host_name());
  return h;
}
const std::string& this_boot() {
  static const std::string b = boot_id();
  return b;
}

namespace {
bool is_local(const LockRecord& r) { return r.host.empty() || r.host == this_host(); }
bool is_earlier_boot(const LockRecord& r) {
  return is_local(r) && !r.boot_id.empty() && !this_boot().empty() && r.boot_id != this_boot();
}

// A whole number a member holds: an integer, a number (its fraction
// dropped) within int64's range, or a string of digits ("12345" from a shell
// that quoted everything); what json::parse's value gave before (issue 24).
std::optional<int64_t> integer_of(const std::string* member) {
  if (!member) return std::nullopt;
  const std::string& t = *member;
  if (t[0] == '"') {
    auto s = json_string_value(t);
    if (s->empty() || s->size() > 18 || !std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::stoll(*s);
  }
  if (!is_json_number(t)) return std::nullopt;
  if (t.size() <= 18 && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    int64_t n = 0;  // the usual case, a time or a pid
    for (char c : t) n = n * 10 + (c - '0');
    return n;
  }
  if (t.find_first_of(".eE") == std::string::npos) {  // an integer out of int64's range is none
    int64_t n;
    if (std::from_chars(t.data(), t.data() + t.size(), n).ec == std::errc{}) return n;
    return std::nullopt;
  }
  // a double out of int64's range would be undefined to convert; exact but
  // for texts of over 19 digits (sys/base/decimal: no strtod in the lock tools)
  const double d = read_decimal(t)->approximate();
  if (d > -9.2e18 && d < 9.2e18) return static_cast<int64_t>(d);
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
std::optional<pid_t> pid_of(const std::string* member) {
  auto n = integer_of(member);
  if (!n || *n <= 0 || *n > INT_MAX) return std::nullopt;
  return static_cast<pid_t>(*n);
}

std::string string_of(const std::string* v) { return v ? json_string_value(*v).value_or("") : ""; }

// The members a record is read for, found in one walk over its fields (a
// lookup for each was most of reading a record, after the parse).
struct RecordMembers {
  const std::string *pid = nullptr, *heartbeat_pid = nullptr, *session = nullptr, *host = nullptr, *boot_id = nullptr,
                    *pid_start = nullptr, *heartbeat_epoch = nullptr, *heartbeat = nullptr, *heartbeat_every = nullptr,
                    *started_at = nullptr;
  explicit RecordMembers(const JsonMembers& o) {
    static constexpr std::pair<std::string_view, const std::string * RecordMembers::*> names[] = {
        {"pid", &RecordMembers::pid},
        {"heartbeat_pid", &RecordMembers::heartbeat_pid},
        {"session", &RecordMembers::session},
        {"host", &RecordMembers::host},
        {"boot_id", &RecordMembers::boot_id},
        {"pid_start", &RecordMembers::pid_start},
        {"heartbeat_epoch", &RecordMembers::heartbeat_epoch},
        {"heartbeat", &RecordMembers::heartbeat},
        {"heartbeat_every", &RecordMembers::heartbeat_every},
        {"started_at", &RecordMembers::started_at}};
    // the parse kept one member per name (the last value), so the first match is the one
    for (const auto& m : o.members) {
      for (const auto& [name, field] : names)
        if (m.name == name) {
          this->*field = &m.text;
          break;
        }
    }
  }
};

}  // namespace

std::string record_string(const JsonMembers& o, std::string_view key) { return o.string(key); }

// The record's members written back as they were read (a record of ours
// holds strings and whole numbers, written as json::compact wrote them).
std::string lock_text(const JsonMembers& record) { return record.json() + '\n'; }

JsonMembers refreshed_record(const LockFile& lock, const Owner& owner, int64_t now, std::optional<double> every) {
  JsonMembers o =
      lock.record.bare_pid ? new_lock_record(std::string(lock.record.session), owner, now) : lock.record.fields;
  o.set_string("heartbeat", iso8601_utc(now));
  o.set_integer("heartbeat_epoch", now);
  if (every) {
    o.set_number("heartbeat_every", *every);
    o.set_integer("heartbeat_pid", getpid());  // the beater, for release_lock's mark
  }
  return o;
}

LockRecord parse_lock_record(std::string_view text, std::string_view subject) {
  LockRecord r;
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) fail_data(quoted(subject) + ": empty lock file");
  auto last = text.find_last_not_of(" \t\r\n");
  std::string_view core = text.substr(first, last - first + 1);
  if (core.size() <= 9 && std::all_of(core.begin(), core.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    r.pid = static_cast<pid_t>(std::stol(std::string(core)));  // a bare pid, as `echo $$ >F` leaves
    r.bare_pid = true;
    r.fields.set_integer("pid", r.pid);
  } else {
    std::optional<JsonMembers> o = parse_json_object(text, subject);
    if (!o) fail_data(quoted(subject) + ": not a lock record: not a JSON object");
    r.fields = std::move(*o);
    const RecordMembers m(r.fields);
    auto pid = pid_of(m.pid);
    if (!pid) fail_data(quoted(subject) + ": not a lock record: no valid pid");
    r.pid = *pid;
    r.heartbeat_pid = pid_of(m.heartbeat_pid);
    r.session = string_of(m.session);
    r.host = string_of(m.host);
    r.boot_id = string_of(m.boot_id);
    if (auto s = integer_of(m.pid_start); s && *s >= 0) r.pid_start = static_cast<uint64_t>(*s);
    r.heartbeat_epoch = valid_epoch(integer_of(m.heartbeat_epoch));
    if (!r.heartbeat_epoch) r.heartbeat_epoch = valid_epoch(parse_iso8601(string_of(m.heartbeat)));
    r.has_heartbeat = r.heartbeat_epoch.has_value();
    if (const std::string* e = m.heartbeat_every; e && is_json_number(*e)) {
      double every = read_decimal(*e)->approximate();
      if (std::isfinite(every) && every > 0 && every <= 1e9) r.heartbeat_every = every;
    }
    if (!r.heartbeat_epoch) r.heartbeat_epoch = valid_epoch(parse_iso8601(string_of(m.started_at)));
  }
  return r;
}

LockFile read_lock_file(const std::string& path, bool listed_regular) {
  LockFile f;
  auto snap = read_file_snapshot(path, max_lock_bytes, listed_regular);
  if (!snap) return f;
  f.mtime = snap->mtime;
  f.id = snap->id;
  f.text = std::move(snap->data);
  if (snap->too_big) {
    // /dev/zero behind a link is refused before this; a huge regular file is
    // garbage, not something to allocate for
    f.state = LockFile::unreadable;
    f.problem = loopkit::format("larger than {} bytes: not a lock file", max_lock_bytes);
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
  // a zombie has a start time, but is no owner
  return {pid, look_at_process(pid).start};
}

bool is_owner_running(const Owner& owner) { return is_same_process_alive(owner.pid, owner.start); }

std::optional<Owner> running_owner(pid_t pid) {
  ProcessLook look = look_at_process(pid);
  if (!look.alive) return std::nullopt;
  return Owner{pid, look.start};
}

namespace {
// Why a local lock's owner is gone, or "" while it runs.
std::string owner_gone(const LockRecord& r) {
  if (is_earlier_boot(r)) return "taken before the host rebooted";
  ProcessLook now = look_at_process(r.pid);
  const std::string pid = "pid " + std::to_string(r.pid);
  if (!now.alive) return pid + (now.zombie ? " has exited, a zombie not yet reaped" : " is not running");
  if (r.pid_start && now.start && *now.start != *r.pid_start) return pid + " now belongs to another process";
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
    v.reason = readable ? loopkit::format("no heartbeat for {}s (over {}s)", *v.age, *limit)
                        : loopkit::format("unreadable and unchanged for {}s (over {}s)", *v.age, *limit);
  // a heartbeat from further ahead than the limit is no sign of life either:
  // a record dated in year 9999 must not keep a lock for ever (an mtime
  // ahead of a LOOPKIT_NOW in the past is no such sign)
  else if (limit && readable && r.heartbeat_epoch && static_cast<double>(*v.age) < -*limit)
    v.reason = loopkit::format("heartbeat {}s in the future (over {}s)", -*v.age, *limit);
  v.stale = !v.reason.empty();
  return v;
}

bool is_lock_ours(const LockRecord& r, const Owner& owner) {
  if (!is_local(r) || is_earlier_boot(r) || r.pid != owner.pid) return false;
  return !r.pid_start || !owner.start || *r.pid_start == *owner.start;
}

JsonMembers new_lock_record(const std::string& session, const Owner& owner, int64_t now) {
  JsonMembers o;
  o.members.reserve(8);
  const std::string at = iso8601_utc(now);
  auto add_string = [&](const char* name, std::string_view s) {
    o.members.push_back({name, {}});
    append_json_string(o.members.back().text, s);
  };
  auto add_integer = [&](const char* name, auto n) { o.members.push_back({name, std::to_string(n)}); };
  add_string("session", session);
  add_integer("pid", owner.pid);
  add_string("host", this_host());
  if (owner.start) add_integer("pid_start", *owner.start);
  add_string("started_at", at);
  add_string("heartbeat", at);
  add_integer("heartbeat_epoch", now);
  if (!this_boot().empty()) add_string("boot_id", this_boot());
  return o;
}

std::string state_name(const LockFile& lock, const Verdict& verdict) {
  if (lock.state == LockFile::missing) return "free";
  if (verdict.stale) return "stale";
  return lock.state == LockFile::unreadable ? "unreadable" : "live";
}

namespace {
std::string pid_on_host(const LockRecord& r) {
  return r.host.empty() ? "pid " + std::to_string(r.pid) : "pid " + std::to_string(r.pid) + " on " + r.host;
}
}  // namespace

std::string describe_owner(const LockRecord& r) {
  return r.session.empty() ? pid_on_host(r) : "session " + quoted(r.session) + ", " + pid_on_host(r);
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
    line += loopkit::format(", {} {}s ago", lock.record.has_heartbeat ? "heartbeat" : "no heartbeat, taken",
                            std::max<int64_t>(0, *verdict.age));
  else line += ", no heartbeat";
  return line;
}

std::string lock_json(const std::string& file, const LockFile& lock, const Verdict& verdict) {
  JsonMembers o = lock.state == LockFile::readable ? lock.record.fields : JsonMembers();
  // a name that is not UTF-8 cannot be JSON text: its other bytes are shown
  // as U+FFFD, as in progress-show --json (the text output names it exactly)
  o.set_string("file", json::to_utf8(file));
  o.set_string("state", state_name(lock, verdict));
  if (verdict.stale) o.set_string("reason", verdict.reason);
  else if (lock.state == LockFile::unreadable) o.set_string("reason", lock.problem);
  if (verdict.stale && lock.state == LockFile::unreadable) o.set_string("problem", lock.problem);
  if (verdict.age) o.set_integer("age", *verdict.age);
  return o.json();
}

std::string describe_not_ours(const std::string& file, pid_t pid, const LockFile* holder) {
  if (!holder) return loopkit::format("no lock {}", quoted(file));
  return loopkit::format("{} is not ours (pid {}): {}", quoted(file), pid, describe_holder(*holder));
}

std::string describe_holder(const LockFile& lock) {
  if (lock.state == LockFile::missing) return "nobody holds it now";
  if (lock.state != LockFile::readable) return "held by an unknown owner (" + lock.problem + ")";
  const LockRecord& r = lock.record;
  std::string s = "held by " + pid_on_host(r);
  if (!r.session.empty()) s += " (session " + quoted(r.session) + ")";
  std::string since = r.fields.string("started_at");
  if (!since.empty()) s += " since " + since;
  if (r.heartbeat_epoch)
    s += loopkit::format(", last heartbeat {}s ago",
                         std::max<int64_t>(0, age_between(current_epoch(), *r.heartbeat_epoch)));
  return s;
}

}  // namespace loopkit
