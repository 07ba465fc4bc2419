#include "sys/proc/supervise_hold.hpp"

#include <cerrno>
#include <cstdint>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"

namespace loopkit {

int open_hold(const std::string& path) {
  // no O_CLOEXEC: the agent's processes are to inherit it
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
  if (fd < 0) fail_system(errno, "open", path);
  return fd;
}

bool try_lock_hold(int fd) {
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EWOULDBLOCK) return false;
    if (errno != EINTR) fail_system(errno, "lock", "the hold file");
  }
}

int take_hold(const std::string& path, const std::function<int()>& until_stop) {
  int fd = open_hold(path);
  while (!try_lock_hold(fd)) {
    if (int stop = until_stop()) {
      close(fd);
      return -stop;
    }
  }
  return fd;
}

void write_hold_record(int fd, const HoldRecord& r) {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "%d %llu %d %llu\n", static_cast<int>(r.pgid),
                        static_cast<unsigned long long>(r.pgid_start.value_or(0)), static_cast<int>(r.parent),
                        static_cast<unsigned long long>(r.parent_start.value_or(0)));
  // one write at offset 0 of a file no longer than it: a reader sees the
  // old record, the new one, or (while it is written) a short one it skips.
  // Cut to one byte (no newline), not to none: ext4 frees the block of a
  // file cut to 0 and writes the file back at its last close
  // (auto_da_alloc): 0.09 ms of CPU an agent-run --hold, and a disk write.
  if (ftruncate(fd, 1) != 0 || pwrite(fd, buf, static_cast<size_t>(n), 0) != n)
    fail_system(errno, "write", "the hold file");
}

std::optional<HoldRecord> read_hold_record(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  char buf[128];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  close(fd);
  if (n <= 0 || buf[n - 1] != '\n') return std::nullopt;
  // four numbers, blank-separated (no sscanf, which brings strtod: 50 KB)
  uint64_t v[4] = {};
  const char* p = buf;
  for (uint64_t& x : v) {
    if (*p < '0' || *p > '9') return std::nullopt;
    for (; *p >= '0' && *p <= '9'; ++p) x = x * 10 + static_cast<uint64_t>(*p - '0');
    if (*p == ' ' || *p == '\n') ++p;
  }
  if (v[0] <= 1 || v[0] > INT32_MAX || v[2] > INT32_MAX) return std::nullopt;
  HoldRecord r{static_cast<pid_t>(v[0]), std::nullopt, static_cast<pid_t>(v[2]), std::nullopt};
  if (v[1]) r.pgid_start = v[1];
  if (v[3]) r.parent_start = v[3];
  return r;
}

bool is_hold_taken(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  bool taken = false;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) break;  // closed below: released at once
    if (errno == EINTR) continue;
    taken = errno == EWOULDBLOCK;
    break;
  }
  close(fd);
  return taken;
}

void kill_hold_holders(dev_t dev, ino_t ino) {
  DIR* proc = opendir("/proc");
  if (!proc) return;
  while (dirent* p = readdir(proc)) {
    if (p->d_name[0] < '1' || p->d_name[0] > '9') continue;
    pid_t pid = static_cast<pid_t>(std::atol(p->d_name));
    if (pid == getpid()) continue;
    std::string dir = std::string("/proc/") + p->d_name + "/fd";
    DIR* fds = opendir(dir.c_str());
    if (!fds) continue;
    while (dirent* f = readdir(fds)) {
      struct stat st {};
      if (f->d_name[0] == '.' || stat((dir + "/" + f->d_name).c_str(), &st) != 0) continue;
      if (st.st_dev == dev && st.st_ino == ino) {
        kill(pid, SIGKILL);
        break;
      }
    }
    closedir(fds);
  }
  closedir(proc);
}

}  // namespace loopkit
