// Built into every tool and test binary of a sanitizer build
// (LOOPKIT_SANITIZE). ASan and UBSan exit with status 1 by default, which
// is every tool's plain "no": a test expecting 1 would pass over a memory
// error. Aborting instead (status 134, SIGABRT) can never be mistaken for
// one of the tools' exit codes. The environment's ASAN_OPTIONS and
// UBSAN_OPTIONS still override these.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace {

// LeakSanitizer stops the process's threads with ptrace at exit, which fails
// when a tracer is already attached: the tests that inject faults with
// strace would die of that, not of a leak. It also lists the threads in
// /proc, so it cannot run where /proc is missing (the tests of writes
// without /proc). Runs before the sanitizers are set up, so only raw
// system calls.
bool leak_check_cannot_run() {
  int fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC));
  if (fd < 0) return true;
  char buf[4096];
  long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
  syscall(SYS_close, fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  const char key[] = "TracerPid:";
  for (long i = 0; i + static_cast<long>(sizeof key) <= n; ++i) {
    bool match = true;
    for (unsigned k = 0; k + 1 < sizeof key && match; ++k) match = buf[i + k] == key[k];
    if (!match) continue;
    const char* p = buf + i + sizeof key - 1;
    while (*p == ' ' || *p == '\t') ++p;
    return *p != '0';
  }
  return false;
}

}  // namespace

extern "C" const char* __asan_default_options() {
  return leak_check_cannot_run()
             ? "abort_on_error=1:detect_leaks=0:strict_string_checks=1:check_initialization_order=1:"
               "disable_coredump=1"
             : "abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1:"
               "disable_coredump=1";
}
extern "C" const char* __ubsan_default_options() { return "abort_on_error=1:halt_on_error=1:print_stacktrace=1"; }
