#include "sys/base/fd.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sys/base/error.hpp"

namespace loopkit {

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void Fd::close(std::string_view subject) {
  int fd = std::exchange(fd_, -1);
  if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) fail_system(errno, "close", subject);
}

void hold_standard_fds() {
  pollfd fds[3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  if (poll(fds, 3, 0) < 0) return;
  for (int fd = 0; fd < 3; ++fd) {
    if (!(fds[fd].revents & POLLNVAL)) continue;
    // the lowest free number is this one: the ones below it are open by now
    const int held = ::open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_NOCTTY);
    if (held >= 0 && held != fd) ::close(held);
  }
}

Fd open_fd(const std::string& path, int flags, unsigned mode) { return open_fd_at(AT_FDCWD, path, flags, mode); }

Fd open_fd_at(int dirfd, const std::string& name, int flags, unsigned mode) {
  int fd;
  do fd = ::openat(dirfd, name.c_str(), flags | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  return Fd(fd);
}

namespace {
// One read(2) of at most n bytes, retrying EINTR; 0 at the end; exit 4 on error.
size_t read_some(int fd, char* into, size_t n, std::string_view subject) {
  for (;;) {
    ssize_t got = ::read(fd, into, n);
    if (got >= 0) return static_cast<size_t>(got);
    if (errno != EINTR) fail_system(errno, "read", subject);
  }
}
}  // namespace

bool is_null_device(const struct stat& st) { return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3); }

std::string read_all(int fd, std::string_view subject) {
  std::string out;
  struct stat st;
  if (fstat(fd, &st) == 0) {
    if (S_ISREG(st.st_mode) && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size) + 1);
    // a device has no end (/dev/zero, a disk): refused, never read into
    // memory without bound; a terminal is read as a person types, to ^D
    if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !is_null_device(st) && !isatty(fd))
      fail_not_regular("read", subject, st.st_mode);
  }
  char buf[65536];
  for (;;) {
    size_t room = out.capacity() - out.size();
    if (room >= sizeof buf) {
      // read straight into the string's spare capacity
      size_t old = out.size();
      out.resize(out.capacity());
      size_t n = read_some(fd, out.data() + old, room, subject);
      out.resize(old + n);
      if (n == 0) break;
      continue;
    }
    size_t n = read_some(fd, buf, sizeof buf, subject);
    if (n == 0) break;
    out.append(buf, n);
  }
  return out;
}

std::string read_up_to(int fd, size_t limit, std::string_view subject) {
  std::string out;
  char buf[65536];
  while (out.size() < limit) {
    size_t n = read_some(fd, buf, std::min(sizeof buf, limit - out.size()), subject);
    if (n == 0) break;
    out.append(buf, n);
  }
  return out;
}

std::string read_regular_up_to(int fd, size_t limit, off_t size, std::string_view subject) {
  const size_t want = size >= 0 && static_cast<uint64_t>(size) < limit ? static_cast<size_t>(size) + 1 : limit;
  if (want > (size_t(1) << 20)) return read_up_to(fd, limit, subject);  // big: in pieces, as read_up_to
  std::string out(want, '\0');
  out.resize(read_some(fd, out.data(), want, subject));
  // short: at its end (the byte past the size it had is there to tell);
  // whole: it grew meanwhile, and the rest is read as any file's
  if (out.size() < want || out.size() >= limit) return out;
  return out + read_up_to(fd, limit - out.size(), subject);
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

bool holds_input(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return false;
  return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_size > 0);
}

off_t file_size(int fd, std::string_view subject) {
  struct stat st;
  if (fstat(fd, &st) != 0) fail_system(errno, "stat", subject);
  return st.st_size;
}

size_t read_at_into(int fd, off_t offset, char* buf, size_t n, std::string_view subject) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, buf + got, n - got, offset + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail_system(errno, "read", subject);
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return got;
}

std::string read_at(int fd, off_t offset, size_t n, std::string_view subject) {
  std::string buf(n, '\0');
  buf.resize(read_at_into(fd, offset, buf.data(), n, subject));
  return buf;
}

}  // namespace loopkit
