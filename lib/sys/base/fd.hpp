// A move-only file descriptor whose close() can fail loudly.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <sys/types.h>
#include <utility>

namespace loopkit {

class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset();
  // close and report failure (a deferred write error on NFS, say)
  void close(std::string_view subject);

private:
  int fd_ = -1;
};

// open(2) that retries EINTR; returns an empty Fd and sets errno on failure
Fd open_fd(const std::string& path, int flags, unsigned mode = 0);
Fd open_fd_at(int dirfd, const std::string& name, int flags, unsigned mode = 0);

// read everything from fd; throws exit 4 naming 'subject', also when fd is
// a device (which may have no end: /dev/zero) other than a terminal or
// /dev/null (which reads as empty: `cmd </dev/null` is no error)
std::string read_all(int fd, std::string_view subject);
// /dev/null (character device 1, 3): the one device every reader takes
bool is_null_device(const struct stat& st);
// read at most limit bytes from fd (fewer only at its end); exit 4 naming subject
std::string read_up_to(int fd, size_t limit, std::string_view subject);
// The same for a regular file of size bytes (its fstat): one read() of
// size + 1 bytes says it was all, where read_up_to needs a second read to
// see the end; a file that grew meanwhile is read on to limit.
std::string read_regular_up_to(int fd, size_t limit, off_t size, std::string_view subject);
// write everything, retrying short writes and EINTR; throws exit 4
void write_all(int fd, std::string_view data, std::string_view subject);

// Descriptors 0, 1 and 2 that were closed (a caller's ">&-") are opened on
// /dev/null the wrong way round (1 and 2 read-only, 0 write-only): their
// reads and writes still fail with EBADF, as on a closed descriptor, but no
// file the tool opens takes their number, so what is printed never lands
// in a lock, a save or a state file. One poll(2) when all three are open.
void hold_standard_fds();

// Size of an open file (exit 4 naming subject on error).
off_t file_size(int fd, std::string_view subject);
// Whether fd is a pipe, a socket or a non-empty regular file: input that
// someone meant to be read (a terminal or /dev/null is not)
bool holds_input(int fd);
// Up to n bytes at offset (fewer only at the end of the file); exit 4 on error.
std::string read_at(int fd, off_t offset, size_t n, std::string_view subject);
// The same into buf, which holds n bytes; returns the count read.
size_t read_at_into(int fd, off_t offset, char* buf, size_t n, std::string_view subject);

}  // namespace loopkit
