#include "sys/watch.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <utility>

#include "sys/clock.hpp"

namespace loopkit {

namespace {
constexpr uint32_t changes = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ATTRIB;
constexpr uint32_t folder_gone = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED | IN_Q_OVERFLOW;

// Whether the events queued now name our change; reads them all.
bool drain(int fd, const std::string& name) {
  alignas(inotify_event) char buf[4096];
  bool hit = false;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return hit;  // EAGAIN: nothing more queued
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(buf + at);
      if (e->mask & folder_gone) hit = true;
      else if (e->len > 0 && std::strcmp(e->name, name.c_str()) == 0) hit = true;
      at += static_cast<ssize_t>(sizeof(inotify_event) + e->len);
    }
  }
}
}  // namespace

NameWatch::NameWatch(const std::string& dir, std::string name) : name_(std::move(name)) {
  Fd fd(inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd) return;  // no inotify (or no instances left): the caller polls
  if (inotify_add_watch(fd.get(), dir.c_str(), changes | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR) < 0) return;
  fd_ = std::move(fd);
}

bool NameWatch::wait(double seconds) {
  if (!fd_) return false;
  const double end = monotonic_seconds() + seconds;
  for (;;) {
    if (drain(fd_.get(), name_)) return true;
    const double left = end - monotonic_seconds();
    if (left <= 0) return false;
    pollfd p{fd_.get(), POLLIN, 0};
    const int ms = left > 1e6 ? 1000000000 : static_cast<int>(left * 1000) + 1;
    if (poll(&p, 1, ms) < 0) return false;  // a signal: the caller looks at it
  }
}

}  // namespace loopkit
