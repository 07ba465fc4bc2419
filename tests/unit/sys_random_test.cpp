// lib/sys/base/random: bytes from getrandom(2) (the clock-and-pid fallback is
// exercised by tests/ctx-save.bats under strace's getrandom fault).
#include <catch2/catch.hpp>
#include <cstring>
#include <set>

#include "sys/base/random.hpp"

using namespace loopkit;

TEST_CASE("fill_random: every call different, every byte value reached", "[random]") {
  std::set<uint64_t> seen;
  for (int i = 0; i < 100; ++i) seen.insert(random_u64());
  CHECK(seen.size() == 100);
  unsigned char bytes[8192];
  std::memset(bytes, 0, sizeof bytes);
  fill_random(bytes, sizeof bytes);
  std::set<unsigned char> values(bytes, bytes + sizeof bytes);
  CHECK(values.size() == 256);  // 8192 random bytes miss one of 256 values with probability ~3e-12
}
