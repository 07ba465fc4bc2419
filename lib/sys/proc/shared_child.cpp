#include "sys/proc/shared_child.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif

namespace loopkit {

SharedChild start_shared_child(int (*fn)(void*), const void* arg, size_t arg_size, size_t stack, bool until_exec) {
  SharedChild c;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t arg_room = (arg_size + 63) / 64 * 64;
  c.size = (arg_room + stack + page - 1) / page * page;
  c.area =
      mmap(nullptr, c.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
  if (c.area == MAP_FAILED) {
    c.area = nullptr;
    return c;
  }
  // the argument at the low end, the stack growing down from the high end
  c.arg = c.area;
  std::memcpy(c.arg, arg, arg_size);
  char* top = static_cast<char*>(c.area) + c.size;
  int flags = CLONE_VM | SIGCHLD | (until_exec ? CLONE_VFORK : 0);
  c.pid = clone(fn, top, flags, c.arg);
  if (c.pid < 0) {
    int e = errno;
    munmap(c.area, c.size);
    c.area = nullptr;
    errno = e;
  }
  return c;
}

bool may_share_memory_long() {
#if defined(RUNNING_ON_VALGRIND)
  return RUNNING_ON_VALGRIND == 0;
#else
  return true;
#endif
}

void free_shared_child(SharedChild& c) {
  if (c.area) munmap(c.area, c.size);
  c.area = nullptr;
  c.arg = nullptr;
}

}  // namespace loopkit
