// lib/sys/fs/mapped and write_file_atomic_with: the pieces of state-set's
// streamed rewrite (see lib/core/state/state.cpp).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/mapped.hpp"
#include "scratch.hpp"

using namespace loopkit;

namespace {
struct Scratch : testing::Scratch {
  Scratch() : testing::Scratch("sys-mapped-test") {}
};

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  return s;
}

// A file "f" of n bytes of pattern, open and held by a MappedFile.
struct PatternFile {
  Scratch d;
  std::string data;
  Fd fd;
  MappedFile m;
  explicit PatternFile(std::size_t n)
      : data(pattern(n)), fd((d.write("f", data), open_fd(d.path("f"), O_RDONLY))), m(fd.get(), "f") {}
};
}  // namespace

TEST_CASE("a mapped file reads the same after its pages are released", "[mapped]") {
  // big enough to be faulted in as read (not populated), so pages do go
  PatternFile f((std::size_t(40) << 20) + 123);
  const std::string& data = f.data;
  MappedFile& m = f.m;
  CHECK(m.at_file_offsets());
  CHECK(m.text() == data);
  m.release_before((std::size_t(20) << 20) + 10);  // rounded down to a page
  m.release_before(4096);                          // going back is a no-op
  m.release_before(data.size());                   // the end, whatever the step
  CHECK(m.text() == data);                         // faulted back in from the page cache
  CHECK(m.offset_of(m.text().substr(100, 5)) == 100);
  CHECK(m.offset_of("elsewhere") == std::string_view::npos);
}

TEST_CASE("a file of a few MiB reads the same, at its own offsets, read or mapped", "[mapped]") {
  // in the range read into huge pages where the kernel offers them
  PatternFile f((std::size_t(9) << 20) + 77);
  const std::string& data = f.data;
  MappedFile& m = f.m;
  CHECK(m.at_file_offsets());
  CHECK(m.text() == data);
  CHECK(m.offset_of(m.text().substr(data.size() - 5)) == data.size() - 5);
  m.release_before(data.size());  // a file this small is kept whole
  CHECK(m.text() == data);
  MappedFile moved(std::move(m));
  CHECK(moved.text() == data);
}

TEST_CASE("a pipe is read into memory, and release_before does nothing", "[mapped]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(::write(fds[1], "{\"a\":1}", 7) == 7);
  close(fds[1]);
  MappedFile m(fds[0], "pipe");
  close(fds[0]);
  CHECK_FALSE(m.at_file_offsets());
  m.release_before(4096);
  CHECK(m.text() == "{\"a\":1}");
}

TEST_CASE("copy_range appends a range of one file to another", "[mapped]") {
  Scratch d;
  std::string data = pattern(3 << 20);
  d.write("src", data);
  Fd in = open_fd(d.path("src"), O_RDONLY);
  Fd out = open_fd(d.path("dst"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  write_all(out.get(), "<", "dst");
  copy_range(in.get(), 1000, out.get(), (2 << 20) + 5, "dst");
  write_all(out.get(), ">", "dst");
  out.close("dst");
  CHECK(d.read("dst") == std::string("<").append(data, 1000, (2 << 20) + 5).append(">"));
  // past the end of the source: the file shrank under us, exit 4
  Fd out2 = open_fd(d.path("dst2"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  CHECK_THROWS_AS(copy_range(in.get(), static_cast<off_t>(data.size()) - 10, out2.get(), 20, "dst2"), Error);
}

TEST_CASE("write_file_atomic_with: all or nothing, the mode kept, no stray", "[mapped]") {
  Scratch d;
  d.write("s.json", "old");
  chmod(d.path("s.json").c_str(), 0640);
  write_file_atomic_with(d.path("s.json"), {.sync = false},
                         [](int fd, const std::string& tmp) { write_all(fd, "new", tmp); });
  CHECK(d.read("s.json") == "new");
  struct stat st;
  REQUIRE(stat(d.path("s.json").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK_THROWS(write_file_atomic_with(d.path("s.json"), {.sync = false}, [](int fd, const std::string& tmp) {
    write_all(fd, "half", tmp);
    fail_data("stop");
  }));
  CHECK(d.read("s.json") == "new");
  CHECK(access(d.path(".s.json.tmp").c_str(), F_OK) != 0);
  // a symlink at the name is refused when it must not be followed
  REQUIRE(symlink("s.json", d.path("link").c_str()) == 0);
  CHECK_THROWS(write_file_atomic_with(d.path("link"), {.sync = false, .follow_symlink = false},
                                      [](int fd, const std::string& tmp) { write_all(fd, "x", tmp); }));
  CHECK(d.read("s.json") == "new");
}

// issue 22: a file cut short under its mapping (cp rewriting it) killed
// state-get and state-set with SIGBUS
TEST_CASE("a file that shrinks under its mapping reads as zeros and says so, never a signal", "[mapped]") {
  for (std::size_t n : {std::size_t(64) << 10, std::size_t(40) << 20}) {  // populated at once; faulted in as read
    PatternFile f(n);
    REQUIRE(f.m.at_file_offsets());
    CHECK_FALSE(f.m.cut_short());
    REQUIRE(ftruncate(open_fd(f.d.path("f"), O_WRONLY).get(), 100) == 0);
    std::string_view text = f.m.text();
    CHECK(text.substr(0, 100) == std::string_view(f.data).substr(0, 100));
    CHECK(text[n - 1] == '\0');  // past the new end: a fault caught, zeros
    CHECK(text[8192] == '\0');
    CHECK(f.m.cut_short());
    try {
      f.m.check_whole();
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::system);
      CHECK(std::string(e.what()) == "cannot read 'f': the file shrank while it was read");
    }
  }
}

TEST_CASE("a file read whole is not cut short", "[mapped]") {
  PatternFile f(1000);
  f.m.check_whole();
  CHECK_FALSE(f.m.cut_short());
  MappedFile moved(std::move(f.m));
  CHECK_FALSE(moved.cut_short());
  CHECK(moved.text() == f.data);
}

// issue 24: a small file is read by one pread, neither mapped nor guarded:
// what was read stays what it was, whatever the file does afterwards
TEST_CASE("a small file is read whole at once, and a later shrink does not touch it", "[mapped]") {
  PatternFile f(5000);
  CHECK_FALSE(f.m.at_file_offsets());
  CHECK(f.m.offset_of(f.m.text().substr(10, 5)) == std::string_view::npos);
  REQUIRE(ftruncate(open_fd(f.d.path("f"), O_WRONLY).get(), 100) == 0);
  CHECK(f.m.text() == f.data);
  f.m.check_whole();
  CHECK_FALSE(f.m.cut_short());
  MappedFile moved(std::move(f.m));
  CHECK(moved.text() == f.data);
}

TEST_CASE("a file just past the small size is mapped, as a bigger one", "[mapped]") {
  for (std::size_t n : {std::size_t(16) << 10, (std::size_t(16) << 10) + 1, std::size_t(100000)}) {
    PatternFile f(n);
    CHECK(f.m.at_file_offsets());
    CHECK(f.m.text() == f.data);
  }
}

TEST_CASE("an empty file reads as nothing", "[mapped]") {
  PatternFile f(0);
  CHECK(f.m.text().empty());
  f.m.check_whole();
}
