// core/log/growing: the one reader of growing files behind progress-show and
// event-show --follow. The follower runs in a child (it ends on SIGTERM,
// whose flag would outlive it in this process) and says each record it
// passes on through a pipe.
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log/growing.hpp"
#include "scratch.hpp"

using namespace loopkit;

namespace {
// Lines from the child, each waited for at most 10 s (a hang fails the test).
struct Child {
  pid_t pid = -1;
  int from = -1;
  std::string buf;
  std::string next() {
    for (;;) {
      std::size_t nl = buf.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        return line;
      }
      pollfd p{from, POLLIN, 0};
      if (poll(&p, 1, 10000) != 1) return "(timed out)";
      char b[256];
      ssize_t n = read(from, b, sizeof b);
      if (n <= 0) return "(closed)";
      buf.append(b, static_cast<std::size_t>(n));
    }
  }
};

void write_file(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "a");
  std::fputs(text.c_str(), f);
  std::fclose(f);
}

Child start_follower(const std::string& path) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  Child c{fork(), fds[0], {}};
  REQUIRE(c.pid >= 0);
  if (c.pid == 0) {
    close(fds[0]);
    int out = fds[1];
    auto say = [out](std::string_view s) { (void)!write(out, s.data(), s.size()); };
    std::optional<growing::Look> first = growing::first_look(path);
    say("ready\n");
    growing::Records lines{[](const growing::Look&) { return uint64_t(0); },
                           [](std::string_view t) {
                             std::size_t nl = t.find('\n');
                             return nl == std::string_view::npos ? nl : nl + 1;
                           }};
    growing::follow(
        path, *first, first->size, lines, 0.005,
        [&](std::string_view record, uint64_t offset) { say(std::to_string(offset) + " " + std::string(record)); },
        [&] { say("restart\n"); });
    _exit(0);
  }
  close(fds[1]);
  return c;
}
}  // namespace

TEST_CASE("growing files: whole records, across a file put in place and a rotation", "[growing]") {
  testing::Scratch d("growing-test");
  const std::string path = d.path("log");
  write_file(path, "a\nb\n");
  Child c = start_follower(path);
  REQUIRE(c.next() == "ready");
  write_file(path, "c");  // a record in two writes: passed on once, whole
  write_file(path, "d\n");
  CHECK(c.next() == "4 cd");
  // the same records and one more, put in place by rename: only the new one
  d.write("tmp", "a\nb\ncd\ne\n");
  REQUIRE(rename(d.path("tmp").c_str(), path.c_str()) == 0);
  CHECK(c.next() == "7 e");
  // a rotation (other records) and a truncation: from the first record again
  d.write("tmp", "x\ny\nz\nw\nv\n");
  REQUIRE(rename(d.path("tmp").c_str(), path.c_str()) == 0);
  CHECK(c.next() == "restart");
  CHECK(c.next() == "0 x");
  for (const char* r : {"2 y", "4 z", "6 w", "8 v"}) CHECK(c.next() == r);
  REQUIRE(truncate(path.c_str(), 0) == 0);
  write_file(path, "t\n");
  CHECK(c.next() == "restart");
  CHECK(c.next() == "0 t");
  kill(c.pid, SIGTERM);
  int status = 0;
  REQUIRE(waitpid(c.pid, &status, 0) == c.pid);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  close(c.from);
}
