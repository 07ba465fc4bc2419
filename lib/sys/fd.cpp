#include "sys/fd.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/error.hpp"

namespace loopkit {

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Fd::close(std::string_view subject) {
  int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) fail_system(errno, "close", subject);
}

Fd open_fd(const std::string& path, int flags, unsigned mode) {
  return open_fd_at(AT_FDCWD, path, flags, mode);
}

Fd open_fd_at(int dirfd, const std::string& name, int flags, unsigned mode) {
  int fd;
  do fd = ::openat(dirfd, name.c_str(), flags | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  return Fd(fd);
}

std::string read_all(int fd, std::string_view subject) {
  std::string out;
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    out.reserve(static_cast<size_t>(st.st_size) + 1);
  char buf[65536];
  for (;;) {
    size_t room = out.capacity() - out.size();
    if (room >= sizeof buf) {
      // read straight into the string's spare capacity
      size_t old = out.size();
      out.resize(out.capacity());
      ssize_t n = ::read(fd, out.data() + old, room);
      if (n < 0) {
        out.resize(old);
        if (errno == EINTR) continue;
        fail_system(errno, "read", subject);
      }
      out.resize(old + static_cast<size_t>(n));
      if (n == 0) break;
      continue;
    }
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_system(errno, "read", subject);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string read_up_to(int fd, size_t limit, std::string_view subject) {
  std::string out;
  char buf[65536];
  while (out.size() < limit) {
    size_t want = std::min(sizeof buf, limit - out.size());
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_system(errno, "read", subject);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void write_all(int fd, std::string_view data, std::string_view subject) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_system(errno, "write", subject);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace loopkit
