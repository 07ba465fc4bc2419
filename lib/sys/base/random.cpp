#include "sys/base/random.hpp"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

namespace loopkit {

void fill_random(void* out, std::size_t n) {
  auto* bytes = static_cast<unsigned char*>(out);
  if (getrandom(bytes, n, GRND_NONBLOCK) == static_cast<ssize_t>(n)) return;
  static uint64_t calls = 0;  // two calls in one clock tick still differ
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = static_cast<uint64_t>(ts.tv_nsec) ^ (static_cast<uint64_t>(getpid()) << 32) ^
               static_cast<uint64_t>(ts.tv_sec) ^ (++calls << 48);
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;  // Knuth's MMIX LCG
    bytes[i] = static_cast<unsigned char>(x >> 56);
  }
}

uint64_t random_u64() {
  uint64_t x = 0;
  fill_random(&x, sizeof x);
  return x;
}

}  // namespace loopkit
