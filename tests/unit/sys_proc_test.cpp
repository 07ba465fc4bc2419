// lib/sys/proc: which processes count as alive.
#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "sys/proc/proc.hpp"
#include "sys/proc/supervise.hpp"

using namespace loopkit;

namespace {
// A child that has exited and that we do not reap yet: a zombie until reaped.
pid_t make_zombie() {
  pid_t p = fork();
  if (p == 0) _exit(0);
  // it becomes a zombie as soon as it has run; bounded at 10 s
  for (int i = 0; i < 10000 && process_state(p) != 'Z'; ++i) usleep(1000);
  return p;
}
}  // namespace

TEST_CASE("a zombie is dead, though kill(pid, 0) still finds it", "[proc]") {
  pid_t z = make_zombie();
  REQUIRE(process_state(z) == 'Z');
  CHECK(kill(z, 0) == 0);
  CHECK(is_zombie(z));
  CHECK_FALSE(is_pid_alive(z));
  auto start = process_start_time(z);
  REQUIRE(start);  // /proc still shows it, start time and all
  CHECK_FALSE(is_same_process_alive(z, start));
  CHECK_FALSE(is_same_process_alive(z, std::nullopt));
  CHECK(wait_for_exit(z, 5));
  waitpid(z, nullptr, 0);
  CHECK_FALSE(is_pid_alive(z));
  CHECK_FALSE(is_zombie(z));
  CHECK_FALSE(process_state(z));
}

TEST_CASE("a running process is alive at its own start time only", "[proc]") {
  CHECK(is_pid_alive(getpid()));
  CHECK_FALSE(is_zombie(getpid()));
  CHECK(process_state(getpid()) == 'R');
  auto start = process_start_time(getpid());
  REQUIRE(start);
  CHECK(is_same_process_alive(getpid(), start));
  CHECK_FALSE(is_same_process_alive(getpid(), *start + 1));
  CHECK_FALSE(is_pid_alive(0));
  CHECK_FALSE(is_pid_alive(-1));
}

TEST_CASE("state and start time are found past a command name with spaces and parentheses", "[proc]") {
  int ready[2], go[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(go) == 0);
  pid_t p = fork();
  if (p == 0) {
    prctl(PR_SET_NAME, "a) b ) R 1 2", 0, 0, 0);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    (void)!read(go[0], &c, 1);  // sleeps in read: state S
    _exit(0);
  }
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  for (int i = 0; i < 10000 && process_state(p) != 'S'; ++i) usleep(1000);
  CHECK(process_state(p) == 'S');
  CHECK(is_pid_alive(p));
  auto start = process_start_time(p);
  REQUIRE(start);
  CHECK(*start >= *process_start_time(getpid()));
  (void)!write(go[1], &c, 1);
  waitpid(p, nullptr, 0);
  for (int fd : {ready[0], ready[1], go[0], go[1]}) close(fd);
}

// issue 24: one read of /proc/PID/stat gives the state and the start time
namespace {
// field 22 of /proc/self/stat, read the long way
uint64_t start_time_of_self() {
  std::ifstream in("/proc/self/stat");
  std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22; ++i) rest >> field;
  return std::stoull(field);
}
}  // namespace

TEST_CASE("a process's state and start time, even with ') ' in its name", "[proc]") {
  char old[17] = {};
  prctl(PR_GET_NAME, old);
  prctl(PR_SET_NAME, "a) b ) c");
  CHECK(process_state(getpid()) == 'R');
  CHECK(process_start_time(getpid()) == start_time_of_self());
  ProcessLook me = look_at_process(getpid());
  CHECK(me.alive);
  CHECK(me.start == start_time_of_self());
  CHECK(is_same_process_alive(getpid(), me.start));
  CHECK_FALSE(is_same_process_alive(getpid(), *me.start + 1));
  prctl(PR_SET_NAME, old);
  CHECK_FALSE(look_at_process(0).alive);
  CHECK_FALSE(look_at_process(0).start);
}

// issue 36: the sentinel looks for a group's members without allocating
// (it shares memory with an agent-run that may have died in malloc): /proc
// read a buffer at a time, its last entries too
namespace {
// count children that wait, in a group of their own, until the pipe go
// closes (we hold its only write end)
std::vector<pid_t> start_waiters(int count, const int (&go)[2]) {
  std::vector<pid_t> pids;
  for (int i = 0; i < count; ++i) {
    pid_t p = fork();
    if (p == 0) {
      close(go[1]);
      char byte;
      (void)!read(go[0], &byte, 1);
      _exit(0);
    }
    setpgid(p, p);
    pids.push_back(p);
  }
  return pids;
}
}  // namespace

TEST_CASE("a group's live member is found past the first read of /proc; a zombie is none", "[proc]") {
  int go[2];
  REQUIRE(pipe(go) == 0);
  // 300 more processes before it: /proc's listing is longer than one read
  std::vector<pid_t> others = start_waiters(300, go);
  pid_t last = start_waiters(1, go).front();
  CHECK(is_group_alive(last, process_start_time(last)));
  CHECK_FALSE(is_group_alive(last, *process_start_time(last) + 1));
  close(go[1]);  // all of them end, and stay zombies until reaped
  for (int i = 0; i < 10000 && process_state(last) != 'Z'; ++i) usleep(1000);
  REQUIRE(process_state(last) == 'Z');
  CHECK(kill(-last, 0) == 0);
  CHECK_FALSE(is_group_alive(last, std::nullopt));
  for (pid_t p : others) waitpid(p, nullptr, 0);
  waitpid(last, nullptr, 0);
  close(go[0]);
}
