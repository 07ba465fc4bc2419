#include "sys/fs/watch.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utility>

#include "sys/time/clock.hpp"
#include "sys/proc/proc.hpp"

namespace loopkit {

namespace {
constexpr uint32_t changes = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB;
constexpr uint32_t folder_gone = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED;
}  // namespace

NameWatch::NameWatch(std::string dir, std::string name)
    : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)), dir_(std::move(dir)), name_(std::move(name)) {}

bool NameWatch::arm() {
  if (!fd_) return false;  // no inotify (or no instances left): the caller polls
  if (wd_ >= 0) return true;
  wd_ = inotify_add_watch(fd_.get(), dir_.c_str(), changes | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
  return wd_ >= 0;
}

void NameWatch::disarm() {
  if (wd_ < 0) return;
  inotify_rm_watch(fd_.get(), wd_);
  wd_ = -1;
}

// Whether the events queued now name our change; reads them all. Events of
// an earlier arming (its IN_IGNORED, say) are not ours.
bool NameWatch::drain() {
  alignas(inotify_event) char buf[4096];
  bool hit = false;
  for (;;) {
    ssize_t n = ::read(fd_.get(), buf, sizeof buf);
    if (n <= 0) return hit;  // EAGAIN: nothing more queued
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
      if (e->mask & IN_Q_OVERFLOW) {
        hit = true;
      } else if (e->wd != wd_) {
        continue;
      } else if (e->mask & folder_gone) {
        hit = true;
        if (e->mask & IN_IGNORED) wd_ = -1;  // the kernel dropped the watch
      } else if (e->len > 0 && std::strcmp(e->name, name_.c_str()) == 0) {
        hit = true;
      }
    }
  }
}

bool NameWatch::wait(double seconds) {
  if (wd_ < 0) return false;
  const double end = monotonic_seconds() + seconds;
  for (;;) {
    if (drain()) return true;
    const double left = end - monotonic_seconds();
    if (left <= 0) return false;
    pollfd p{fd_.get(), POLLIN, 0};
    const int ms = left > 1e6 ? 1000000000 : static_cast<int>(left * 1000) + 1;
    if (poll(&p, 1, ms) < 0) return false;  // a signal: the caller looks at it
  }
}

NameWatch::Woke NameWatch::wait_or_exit(double seconds, pid_t pid) {
  Fd process;
#ifdef SYS_pidfd_open
  process = Fd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (!process && errno == ESRCH) return Woke::exited;
#endif
  const double end = monotonic_seconds() + seconds;
  for (;;) {
    if (wd_ >= 0 && drain()) return Woke::changed;
    if (!process && !is_pid_alive(pid)) return Woke::exited;
    const double left = end - monotonic_seconds();
    if (left <= 0) return Woke::time_up;
    pollfd p[2] = {{process ? process.get() : -1, POLLIN, 0}, {wd_ >= 0 ? fd_.get() : -1, POLLIN, 0}};
    // without a pidfd the process is looked at again after a second at most
    const double slice = process ? left : (left < 1 ? left : 1);
    const int ms = slice > 1e6 ? 1000000000 : static_cast<int>(slice * 1000) + 1;
    int rc = poll(p, 2, ms);
    if (rc < 0) return Woke::time_up;  // a signal: the caller looks at it
    if (p[0].revents != 0) return Woke::exited;
  }
}

}  // namespace loopkit
