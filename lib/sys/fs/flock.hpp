// flock(2) with the outcomes spelled out.
#pragma once
#include <string_view>

namespace loopkit {

// Block until locked (retrying EINTR); exit 4 on error.
void flock_wait(int fd, bool exclusive, std::string_view subject);
void flock_release(int fd);

}  // namespace loopkit
