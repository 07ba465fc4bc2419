// Random bytes from the kernel, without std::random_device (whose
// exceptions and token parsing are 4 KB of every tool that names it).
#pragma once
#include <cstddef>
#include <cstdint>

namespace loopkit {

// n bytes from getrandom(2). Before the kernel has entropy (early boot) or
// where getrandom is refused (old seccomp filters), bytes from the clock and
// the pid: distinct per call and per process, if not secret.
void fill_random(void* out, std::size_t n);
uint64_t random_u64();

}  // namespace loopkit
