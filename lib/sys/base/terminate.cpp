// What std::terminate prints before it aborts (an exception that escaped a
// noexcept function or a destructor; every other one becomes "TOOL:
// message" in cli/tool.cpp). libstdc++'s own handler names the exception's
// type with its demangler, 47 KB of every static tool: this one says the
// same but for the type. The build links it in ahead of libstdc++'s
// (--undefined in CMakeLists.txt); its name is libstdc++'s, declared in
// <exception>.
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <exception>
#include <unistd.h>

namespace {
void say(const char* text) {
  ssize_t n = write(STDERR_FILENO, text, std::strlen(text));
  (void)n;  // on the way to abort: nothing to do about a failed write
}
}  // namespace

namespace __gnu_cxx {
void __verbose_terminate_handler() {
  static bool terminating = false;  // what() itself may terminate
  if (!terminating) {
    terminating = true;
    if (abi::__cxa_current_exception_type() == nullptr) {
      say("terminate called without an active exception\n");
    } else {
      say("terminate called after throwing an exception\n");
      try {
        throw;
      } catch (const std::exception& e) {
        say("  what():  ");
        say(e.what());
        say("\n");
      } catch (...) {
      }
    }
  }
  std::abort();
}
}  // namespace __gnu_cxx
