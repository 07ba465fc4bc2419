#include "sys/fs/flock.hpp"

#include <cerrno>
#include <sys/file.h>

#include "sys/base/error.hpp"

namespace loopkit {

void flock_wait(int fd, bool exclusive, std::string_view subject) {
  while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
    if (errno != EINTR) fail_system(errno, "lock", subject);
  }
}

void flock_release(int fd) { flock(fd, LOCK_UN); }

}  // namespace loopkit
