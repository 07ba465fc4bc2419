// lib/sys/fs/file and folder: the rule for links and special files. The files
// the tools write, lock or delete are regular files, never reached through a
// symlink at their name; FIFOs, devices and sockets are refused at once.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/folder.hpp"
#include "scratch.hpp"
#include "system_error.hpp"

using namespace loopkit;

namespace {
struct Scratch : testing::Scratch {
  Scratch() : testing::Scratch("sys-file-test") {}
};

using testing::system_error;

void make_socket(const std::string& path) {
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  path.copy(a.sun_path, sizeof a.sun_path - 1);
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  close(s);
}
}  // namespace

TEST_CASE("write_file_atomic without following refuses a link or special file, writing nothing", "[file]") {
  Scratch d;
  d.write("target", "precious\n");
  REQUIRE(symlink("target", d.path("link").c_str()) == 0);
  REQUIRE(symlink("nowhere", d.path("dangling").c_str()) == 0);
  REQUIRE(mkfifo(d.path("fifo").c_str(), 0600) == 0);
  AtomicWrite strict{.follow_symlink = false};
  CHECK(system_error([&] { write_file_atomic(d.path("link"), "x", strict); }) ==
        "cannot replace '" + d.path("link") + "': is a symbolic link");
  CHECK(system_error([&] { write_file_atomic(d.path("dangling"), "x", strict); }) ==
        "cannot replace '" + d.path("dangling") + "': is a symbolic link");
  CHECK(system_error([&] { write_file_atomic(d.path("fifo"), "x", strict); }) ==
        "cannot replace '" + d.path("fifo") + "': is a FIFO");
  CHECK(d.read("target") == "precious\n");
  CHECK(d.is_link("link"));
  CHECK(d.is_link("dangling"));
  CHECK_FALSE(path_exists(d.path("nowhere")));
  CHECK_FALSE(path_exists(d.path(".link.tmp")));
  // a regular file is replaced as ever
  d.write("plain", "old");
  write_file_atomic(d.path("plain"), "new", strict);
  CHECK(d.read("plain") == "new");
}

TEST_CASE("write_file_atomic: following writes the target; replace_symlink replaces the link", "[file]") {
  Scratch d;
  d.write("target", "old");
  REQUIRE(symlink("target", d.path("link").c_str()) == 0);
  write_file_atomic(d.path("link"), "through");
  CHECK(d.is_link("link"));
  CHECK(d.read("target") == "through");
  write_file_atomic(d.path("link"), "mine", {.follow_symlink = false, .replace_symlink = true});
  CHECK_FALSE(d.is_link("link"));
  CHECK(d.read("link") == "mine");
  CHECK(d.read("target") == "through");
  // a FIFO behind a followed link is refused, not replaced
  REQUIRE(mkfifo(d.path("fifo").c_str(), 0600) == 0);
  REQUIRE(symlink("fifo", d.path("to-fifo").c_str()) == 0);
  CHECK(system_error([&] { write_file_atomic(d.path("to-fifo"), "x"); }) ==
        "cannot replace '" + d.path("to-fifo") + "': is a FIFO");
}

TEST_CASE("write_file_atomic only_if_present never brings back a file deleted under it", "[file]") {
  Scratch d;
  AtomicWrite present{.follow_symlink = false, .only_if_present = true};
  d.write("f", "old");
  REQUIRE(chmod(d.path("f").c_str(), 0640) == 0);
  CHECK(write_file_atomic(d.path("f"), "new", present));
  CHECK(d.read("f") == "new");
  struct stat st;
  REQUIRE(stat(d.path("f").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK_FALSE(path_exists(d.path(".f.tmp")));  // the old file, exchanged out, is gone too
  // deleted while the new text was being written (as rm, which takes no lock, can)
  CHECK_FALSE(write_file_atomic_with(d.path("f"), present, [&](int fd, const std::string&) {
    REQUIRE(::write(fd, "late", 4) == 4);
    REQUIRE(unlink(d.path("f").c_str()) == 0);
  }));
  CHECK_FALSE(path_exists(d.path("f")));
  CHECK_FALSE(path_exists(d.path(".f.tmp")));
  // and already gone before
  CHECK_FALSE(write_file_atomic(d.path("f"), "x", present));
  CHECK_FALSE(path_exists(d.path("f")));
  // without it, a missing file is created as ever
  CHECK(write_file_atomic(d.path("f"), "x", {.follow_symlink = false}));
  CHECK(d.read("f") == "x");
}

TEST_CASE("lock_for_replace refuses a FIFO, device or socket at once, and follows a link to a file", "[file]") {
  Scratch d;
  REQUIRE(mkfifo(d.path("fifo").c_str(), 0600) == 0);
  REQUIRE(symlink("fifo", d.path("to-fifo").c_str()) == 0);
  REQUIRE(symlink("/dev/zero", d.path("to-zero").c_str()) == 0);
  make_socket(d.path("sock"));
  CHECK(system_error([&] { lock_for_replace(d.path("fifo")); }) == "cannot open '" + d.path("fifo") + "': is a FIFO");
  CHECK(system_error([&] { lock_for_replace(d.path("to-fifo")); }) ==
        "cannot open '" + d.path("to-fifo") + "': is a FIFO");
  CHECK(system_error([&] { lock_for_replace(d.path("to-zero")); }) ==
        "cannot open '" + d.path("to-zero") + "': is a device");
  CHECK(system_error([&] { lock_for_replace(d.path("sock")); }) == "cannot open '" + d.path("sock") + "': is a socket");
  d.write("state.json", "{}");
  REQUIRE(symlink("state.json", d.path("link.json").c_str()) == 0);
  LockedForReplace held = lock_for_replace(d.path("link.json"));
  CHECK(held.exists);
  CHECK(held.contents.view() == "{}");
}

TEST_CASE("readers given a pipe by name still read it", "[file]") {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  REQUIRE(::write(fds[1], "{\"a\":1}", 7) == 7);
  close(fds[1]);
  // what bash's <(cmd) hands over: /dev/fd/N, a link to the pipe, opened
  // and read as progress-show reads it
  const std::string name = "/dev/fd/" + std::to_string(fds[0]);
  struct stat st;
  Fd fd = open_to_read(name, st);
  REQUIRE(fd);
  CHECK(!S_ISREG(st.st_mode));
  CHECK(view_fd(fd.get(), name).view() == "{\"a\":1}");
  close(fds[0]);
}

TEST_CASE("read_file_snapshot never follows a link, never waits on a FIFO, reads a bounded amount", "[file]") {
  Scratch d;
  d.write("target", "secret");
  REQUIRE(symlink("target", d.path("link").c_str()) == 0);
  REQUIRE(symlink("/dev/zero", d.path("zero").c_str()) == 0);
  REQUIRE(mkfifo(d.path("fifo").c_str(), 0600) == 0);
  make_socket(d.path("sock"));
  CHECK(system_error([&] { read_file_snapshot(d.path("link"), 100); }) ==
        "cannot open '" + d.path("link") + "': is a symbolic link");
  CHECK(system_error([&] { read_file_snapshot(d.path("zero"), 100); }) ==
        "cannot open '" + d.path("zero") + "': is a symbolic link");
  CHECK(system_error([&] { read_file_snapshot(d.path("fifo"), 100); }) ==
        "cannot open '" + d.path("fifo") + "': is a FIFO");
  CHECK(system_error([&] { read_file_snapshot(d.path("sock"), 100); }) ==
        "cannot open '" + d.path("sock") + "': is a socket");
  CHECK_FALSE(read_file_snapshot(d.path("missing"), 100));
  d.write("ten", "0123456789");
  auto exact = read_file_snapshot(d.path("ten"), 10);
  REQUIRE(exact);
  CHECK(exact->data == "0123456789");
  CHECK_FALSE(exact->too_big);
  CHECK(exact->id == *file_id(d.path("ten")));
  auto cut = read_file_snapshot(d.path("ten"), 4);
  REQUIRE(cut);
  CHECK(cut->data == "0123");
  CHECK(cut->too_big);
}

TEST_CASE("remove_file_if_same unlinks only the file that was checked", "[file]") {
  Scratch d;
  d.write("a", "1");
  FileId checked = *file_id(d.path("a"));
  // the name now stands for a link to another file: neither goes
  d.write("target", "precious");
  REQUIRE(rename(d.path("a").c_str(), d.path("old").c_str()) == 0);
  REQUIRE(symlink("target", d.path("a").c_str()) == 0);
  CHECK(remove_file_if_same(d.path("a"), checked) == Removal::changed);
  CHECK(d.is_link("a"));
  CHECK(d.read("target") == "precious");
  // a link to the very file checked is still not that file
  REQUIRE(unlink(d.path("a").c_str()) == 0);
  REQUIRE(symlink("old", d.path("a").c_str()) == 0);
  CHECK(remove_file_if_same(d.path("a"), checked) == Removal::changed);
  CHECK(path_exists(d.path("old")));
  CHECK(remove_file_if_same(d.path("old"), checked) == Removal::removed);
  CHECK_FALSE(path_exists(d.path("old")));
  CHECK(remove_file_if_same(d.path("old"), checked) == Removal::missing);
}

// issue 24: the name is looked at before any link is resolved (no readlink
// for a regular file); a link found there is still followed to its end
TEST_CASE("write_file_atomic follows a chain of links, a dangling one to a new file", "[file]") {
  Scratch d;
  REQUIRE(mkdir(d.path("sub").c_str(), 0755) == 0);
  d.write("sub/target", "old");
  chmod(d.path("sub/target").c_str(), 0640);
  REQUIRE(symlink("sub/target", d.path("one").c_str()) == 0);
  REQUIRE(symlink("one", d.path("two").c_str()) == 0);
  write_file_atomic(d.path("two"), "new", {.sync = false});
  CHECK(d.is_link("two"));
  CHECK(d.is_link("one"));
  CHECK(d.read("sub/target") == "new");
  struct stat st;
  REQUIRE(stat(d.path("sub/target").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);  // the target's mode, not the link's
  REQUIRE(symlink("sub/missing", d.path("dangling").c_str()) == 0);
  write_file_atomic(d.path("dangling"), "made", {.mode = 0600, .sync = false});
  CHECK(d.is_link("dangling"));
  CHECK(d.read("sub/missing") == "made");
  CHECK(system_error([&] { write_file_atomic(d.path("sub"), "x"); }) ==
        "cannot replace '" + d.path("sub") + "': Is a directory");
}

// issue 24: a snapshot is one read() of its size and a byte more; a file
// exactly at the limit, or one past it, is still told apart
TEST_CASE("read_file_snapshot reads whole and bounded files as before", "[file]") {
  Scratch d;
  for (std::size_t n :
       {std::size_t(0), std::size_t(1), std::size_t(99), std::size_t(100), std::size_t(101), std::size_t(3) << 20}) {
    const std::string data(n, 'x');
    d.write("f", data);
    auto whole = read_file_snapshot(d.path("f"));
    REQUIRE(whole);
    CHECK(whole->data == data);
    CHECK_FALSE(whole->too_big);
    auto bounded = read_file_snapshot(d.path("f"), 100);
    REQUIRE(bounded);
    CHECK(bounded->data == data.substr(0, 100));
    CHECK(bounded->too_big == (n > 100));
  }
}
