#include "core/lock/lock_queue.hpp"

#include <algorithm>
#include <charconv>
#include <unistd.h>

#include "core/lock/lock_record.hpp"
#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/folder.hpp"
#include "sys/base/format.hpp"
#include "sys/fs/link.hpp"
#include "sys/proc/proc.hpp"

namespace loopkit {

namespace {
// Zero-padded, so that the names sort in the order of their numbers
constexpr std::size_t number_digits = 12;

std::optional<uint64_t> number_of(std::string_view name, std::string_view prefix) {
  if (name.size() != prefix.size() + number_digits) return std::nullopt;
  uint64_t n = 0;
  const char* end = name.data() + name.size();
  auto [at, err] = std::from_chars(name.data() + prefix.size(), end, n);
  if (err != std::errc() || at != end) return std::nullopt;
  return n;
}

bool is_waiter_alive(std::string_view text) {
  long long pid = 0;
  uint64_t start = 0;
  const char* end = text.data() + text.size();
  auto [at, err] = std::from_chars(text.data(), end, pid);
  if (err != std::errc() || pid <= 0 || pid > INT32_MAX) return false;
  std::optional<uint64_t> started;
  if (at < end && *at == ' ' && std::from_chars(at + 1, end, start).ec == std::errc()) started = start;
  return is_same_process_alive(static_cast<pid_t>(pid), started);
}
}  // namespace

// the waiter, as the lock records its owner
std::string waiter_text() {
  const pid_t me = getpid();
  const ProcessLook look = look_at_process(me);
  return look.start ? loopkit::format("{} {}\n", me, *look.start) : loopkit::format("{}\n", me);
}

std::string waiter_text_with_host() {
  const pid_t me = getpid();
  const ProcessLook look = look_at_process(me);
  const std::string& boot = this_boot();
  return loopkit::format("{} {} {} {}\n", me, look.start ? std::to_string(*look.start) : "-", boot.empty() ? "-" : boot,
                         this_host());
}

bool is_local_waiter_gone(std::string_view text) {
  std::string_view rest = text;  // past PID and START: BOOT HOST
  if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
  for (int skip = 0; skip < 2; ++skip) {
    const std::size_t space = rest.find(' ');
    if (space == std::string_view::npos) return false;  // an older ticket, with no host: nobody can tell
    rest.remove_prefix(space + 1);
  }
  const std::size_t space = rest.find(' ');
  if (space == std::string_view::npos || rest.substr(space + 1) != this_host()) return false;
  const std::string_view boot = rest.substr(0, space);
  if (boot != "-" && !this_boot().empty() && boot != this_boot()) return true;  // before this host's last boot
  return !is_waiter_alive(text);  // its PID and START, as a lock file's ticket holds them
}

std::string wait_ticket_prefix(const std::string& key) {
  const std::size_t slash = key.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  return key.substr(0, base) + "." + key.substr(base) + ".wait.";
}

std::string wait_ticket_key(const std::string& key, int64_t lease) {
  return wait_ticket_prefix(key) + loopkit::format("{:016x}", static_cast<uint64_t>(lease));
}

namespace {
constexpr std::size_t ticket_digits = 16;
bool is_ticket_number(std::string_view hex) {
  return hex.size() == ticket_digits &&
         std::all_of(hex.begin(), hex.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}
}  // namespace

bool is_wait_ticket_key(std::string_view key) {
  const std::size_t slash = key.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  constexpr std::string_view middle = ".wait.";
  if (name.size() < 1 + 1 + middle.size() + ticket_digits || name.front() != '.') return false;
  return name.substr(name.size() - ticket_digits - middle.size(), middle.size()) == middle &&
         is_ticket_number(name.substr(name.size() - ticket_digits));
}

bool is_ticket_in_line(std::string_view key, std::string_view prefix) {
  return key.starts_with(prefix) && is_ticket_number(key.substr(prefix.size()));
}

WaitTicket::WaitTicket(const std::string& path)
    : dir_(dir_name(path)), prefix_("." + name_stem(base_name(path), 23) + ".wait.") {
  const std::string text = waiter_text();
  const std::string at = dir_ == "." && path.find('/') == std::string::npos ? "" : dir_ + "/";
  // a number taken meanwhile by another waiter: look at the line again
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t last = 0;
    for (const auto& name : names_starting_with(dir_, prefix_))
      if (auto n = number_of(name, prefix_)) last = std::max(last, *n);
    std::string name = loopkit::format("{}{:0{}}", prefix_, last + 1, number_digits);
    // not synced: a line does not outlive a crash of its waiters
    if (link_new_file(at + name, text, 0644, false)) {
      name_ = at + name;
      return;
    }
  }
  fail(Exit::system, loopkit::format("cannot join the line of waiters for {}", quoted(path)));
}

WaitTicket::~WaitTicket() {
  try {
    remove_file(name_);
  } catch (const Error&) {
  }
}

// No live waiter holds a lower number; the tickets of dead ones go.
bool WaitTicket::is_first() {
  const std::string at = name_.substr(0, name_.size() - base_name(name_).size());
  const std::string mine = base_name(name_);
  for (const auto& name : names_starting_with(dir_, prefix_)) {
    if (name >= mine) break;
    if (!number_of(name, prefix_)) continue;
    try {
      auto ticket = read_file_snapshot(at + name, 64);
      if (!ticket) continue;
      if (is_waiter_alive(ticket->data)) return false;
      remove_file_if_same(at + name, ticket->id);
    } catch (const Error&) {
      // a ticket that cannot be read or removed (a link planted there,
      // another user's in a sticky folder) holds nobody up
    }
  }
  return true;
}

bool WaitTicket::my_turn(const std::function<bool()>& lock_free) {
  if (is_first()) return true;
  if (!lock_free()) {
    free_since_.reset();
    return false;
  }
  const double now = monotonic_seconds();
  if (!free_since_) free_since_ = now;
  return now - *free_since_ >= queue_grace;
}

}  // namespace loopkit
