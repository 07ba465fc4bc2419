// Built into every tool and test binary of a sanitizer build
// (LOOPKIT_SANITIZE). ASan and UBSan exit with status 1 by default, which
// is every tool's plain "no": a test expecting 1 would pass over a memory
// error. Aborting instead (status 134, SIGABRT) can never be mistaken for
// one of the tools' exit codes. The environment's ASAN_OPTIONS and
// UBSAN_OPTIONS still override these.
extern "C" const char* __asan_default_options() {
  return "abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1:"
         "check_initialization_order=1:disable_coredump=1";
}
extern "C" const char* __ubsan_default_options() {
  return "abort_on_error=1:halt_on_error=1:print_stacktrace=1";
}
