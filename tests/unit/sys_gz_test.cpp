// lib/sys/gz: every member of a stream, and a bound on inflation (issue 22).
#include <catch2/catch.hpp>
#include <functional>

#include "sys/base/error.hpp"
#include "sys/gz/gz.hpp"

using namespace loopkit;

namespace {
Exit code_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.code();
  }
  return Exit::ok;
}
}  // namespace

TEST_CASE("gzip members appended one after another read as all of them, as gzip -d reads them", "[gz]") {
  // what `gzip >>log.gz` leaves: it was read as its last member only
  std::string log = gzip("{\"seq\":1}\n") + gzip("{\"seq\":2}\n") + gzip("") + gzip("{\"seq\":3}\n");
  CHECK(gunzip(log, "log.gz") == "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n");
  CHECK(gunzip(log + std::string(512, '\0'), "log.gz") == "{\"seq\":1}\n{\"seq\":2}\n{\"seq\":3}\n");  // padding
  std::string m;
  CHECK(code_of([&] { gunzip(log + "junk", "log.gz"); }, &m) == Exit::data);
  CHECK(m == "'log.gz': corrupt gzip data");
  CHECK(code_of([&] { gunzip(log.substr(0, log.size() - 3), "log.gz"); }) == Exit::data);  // cut short
  CHECK(code_of([&] { gunzip("", "e.gz"); }) == Exit::data);
}

TEST_CASE("a gzip bomb stops at the inflate limit with exit 3 naming the file", "[gz]") {
  std::string zeros(std::size_t(3) << 20, '\0');
  std::string bomb = gzip(zeros);        // about 3 KiB
  CHECK(gunzip(bomb, "b.gz") == zeros);  // under the default limit
  std::string m;
  CHECK(code_of([&] { gunzip(bomb, "b.gz", std::size_t(1) << 20); }, &m) == Exit::data);
  CHECK(m == "'b.gz': gzip data inflates past 1048576 bytes, the limit for its size (100 times it, at least 256 MiB)");
  CHECK(gunzip(bomb, "b.gz", zeros.size()) == zeros);  // exactly at the limit is fine
  CHECK(code_of([&] { gunzip(bomb, "b.gz", zeros.size() - 1); }) == Exit::data);
  // two members: the limit counts both
  CHECK(code_of([&] { gunzip(bomb + bomb, "b.gz", zeros.size() + 10); }) == Exit::data);
  CHECK(gunzip_limit(1000) == std::size_t(256) << 20);
  CHECK(gunzip_limit(std::size_t(10) << 20) == std::size_t(1000) << 20);
}

TEST_CASE("gzip writes the header zlib wrote (no name, time 0, Unix) and the CRC-32 and size of the data", "[gz]") {
  std::string z = gzip("hello, hello, hello\n");
  CHECK(z.substr(0, 10) == std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03", 10));
  std::string trailer = z.substr(z.size() - 8);
  // Python's zlib.crc32(b"hello, hello, hello\n"): 0x526e42e7; 20 bytes
  CHECK(trailer == std::string("\xe7\x42\x6e\x52\x14\0\0\0", 8));
  CHECK(gunzip(z, "h.gz") == "hello, hello, hello\n");
}
