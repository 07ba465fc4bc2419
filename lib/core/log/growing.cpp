#include "core/log/growing.hpp"

#include <algorithm>
#include <sys/stat.h>

#include "sys/time/clock.hpp"
#include "sys/base/error.hpp"
#include "sys/fs/file.hpp"
#include "sys/fs/flock.hpp"
#include "sys/proc/interrupt.hpp"

namespace loopkit::growing {

namespace {
constexpr std::size_t kBlock = 1 << 20;
// The last bytes of the records seen, by which a file put in place is told
// apart: the same records (under a new head) go on where they were.
constexpr std::size_t kSeenTail = 256;

uint64_t settled_size(int fd, const std::string& path) {
  flock_wait(fd, false, path);
  const uint64_t size = static_cast<uint64_t>(file_size(fd, path));
  flock_release(fd);
  return size;
}

bool ends_with_gz(const std::string& path) { return path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }
}  // namespace

Look look_at(Fd fd, ino_t inode, const std::string& path) {
  Look l;
  l.size = settled_size(fd.get(), path);
  l.inode = inode;
  l.read = [fd = fd.get(), size = l.size, &path](uint64_t offset, std::size_t n) {
    if (offset >= size) return std::string();
    return read_at(fd, static_cast<off_t>(offset), static_cast<std::size_t>(std::min<uint64_t>(n, size - offset)),
                   path);
  };
  l.fd = std::move(fd);
  return l;
}

std::optional<Look> look(const std::string& path) {
  struct stat st {};
  Fd fd = open_to_read(path, st);
  if (!fd || !S_ISREG(st.st_mode)) return std::nullopt;
  return look_at(std::move(fd), st.st_ino, path);
}

std::optional<Look> first_look(const std::string& path) {
  if (path == "-" || ends_with_gz(path)) fail_usage("--follow needs a FILE, not standard input or a .gz file");
  struct stat st {};
  Fd fd = open_to_read(path, st);
  if (!fd) return std::nullopt;
  if (!S_ISREG(st.st_mode)) fail_usage("--follow needs a regular file: " + quoted(path));
  // from here a signal ends the follow, after the first look is shown whole
  catch_termination_signals();
  return look_at(std::move(fd), st.st_ino, path);
}

namespace {
// Where a follower is: records begin at start, consumed bytes of them were
// passed on, carry holds bytes read past the last whole one.
struct Place {
  uint64_t start = 0;
  uint64_t consumed = 0;
  std::string carry;
  std::string seen;  // the last bytes of the records passed on
  ino_t inode = 0;
};

// Whether now still holds the records seen where they were; a file put in
// place gets its records' start first.
bool still_there(Place& at, const Look& now, const Records& records) {
  if (now.inode != at.inode) {
    at.inode = now.inode;
    at.start = records.start(now);
    const uint64_t end = at.start + at.consumed;
    if (now.size < end || now.read(end - at.seen.size(), at.seen.size()) != at.seen) return false;
  }
  return now.size >= at.start + at.consumed + at.carry.size();
}

void pass_on(Place& at, const Look& now, const Records& records, const OnRecord& on_record) {
  for (uint64_t from = at.start + at.consumed + at.carry.size(); from < now.size;) {
    std::string more = now.read(from, kBlock);
    if (more.empty()) break;
    from += more.size();
    at.carry += more;
  }
  std::size_t used = 0;
  for (std::size_t end; (end = records.first_end(std::string_view(at.carry).substr(used))) != std::string::npos;) {
    std::string_view record = std::string_view(at.carry).substr(used, end);
    on_record(record, at.start + at.consumed);
    at.consumed += end;
    used += end;
    at.seen = std::string(record.substr(record.size() - std::min(record.size(), kSeenTail)));
  }
  at.carry.erase(0, used);
}
}  // namespace

void follow(const std::string& path, const Look& first, uint64_t seen_to, const Records& records, double poll,
            const OnRecord& on_record, const std::function<void()>& on_restart) {
  Place at;
  at.inode = first.inode;
  at.start = std::min(records.start(first), seen_to);
  at.consumed = seen_to - at.start;
  const std::size_t tail = static_cast<std::size_t>(std::min<uint64_t>(at.consumed, kSeenTail));
  at.seen = first.read(seen_to - tail, tail);
  while (termination_signal() == 0) {
    sleep_seconds(poll);
    std::optional<Look> now = look(path);
    if (!now) continue;
    if (!still_there(at, *now, records)) {
      on_restart();
      at.start = records.start(*now);
      at.consumed = 0;
      at.carry.clear();
      at.seen.clear();
    }
    pass_on(at, *now, records, on_record);
  }
}

}  // namespace loopkit::growing
