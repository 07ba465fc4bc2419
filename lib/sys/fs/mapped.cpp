#include "sys/fs/mapped.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <csignal>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

#include "sys/base/error.hpp"
#include "sys/base/fd.hpp"

namespace loopkit {

namespace {
// Up to this size the whole file is faulted in by one call (MAP_POPULATE):
// fewer faults for the common small state file. Above, pages come in as
// the pass reads them and go again with release_before.
constexpr std::size_t populate_limit = std::size_t(32) << 20;
constexpr std::size_t page = 4096;
constexpr std::size_t release_step = std::size_t(4) << 20;
// From this size up to populate_limit a file is read into huge pages when
// the kernel offers them; below, a mapping's few faults cost less.
constexpr std::size_t huge_from = std::size_t(4) << 20;
constexpr std::size_t huge_page = std::size_t(2) << 20;

// "never" (or no THP at all) would leave a read buffer in 4 KiB pages,
// each faulted and zeroed: several times slower than the mapping.
bool huge_pages_offered() {
  const std::string knob = "/sys/kernel/mm/transparent_hugepage/enabled";
  Fd fd = open_fd(knob, O_RDONLY);
  if (!fd) return false;
  try {
    std::string mode = read_up_to(fd.get(), 128, knob);
    return mode.find("[always]") != std::string::npos || mode.find("[madvise]") != std::string::npos;
  } catch (const Error&) {
    return false;  // a knob that cannot be read: keep the mapping
  }
}

// An anonymous mapping that a file was read into: the text starts at its
// first huge page boundary.
struct HugeRead {
  void* raw;
  std::size_t raw_len;
  char* text;
  std::size_t len;  // fewer than asked when the file shrank
};

// The first len bytes of fd in huge pages, or nothing when no memory could
// be mapped (then the caller maps the file); exit 4 naming subject.
std::optional<HugeRead> read_into_huge_pages(int fd, std::size_t len, std::string_view subject) {
  std::size_t raw_len = (len + huge_page - 1) / huge_page * huge_page + huge_page;
  void* raw = mmap(nullptr, raw_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return std::nullopt;
  auto* text = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + huge_page - 1) & ~(huge_page - 1));
  madvise(text, len, MADV_HUGEPAGE);
  try {
    return HugeRead{raw, raw_len, text, read_at_into(fd, 0, text, len, subject)};
  } catch (...) {
    munmap(raw, raw_len);
    throw;
  }
}
// ---- the SIGBUS guard (see mapped.hpp) --------------------------------------
// Slots, not a list: the handler may run at any instruction, so it reads
// only fixed words. A tool holds one or two mappings at a time.
constexpr int guard_slots = 8;
std::atomic<std::uintptr_t> guard_start[guard_slots];
std::atomic<std::uintptr_t> guard_end[guard_slots];  // 0: the slot is free
volatile std::sig_atomic_t guard_cut[guard_slots];
struct sigaction guard_previous;

void on_sigbus(int sig, siginfo_t* info, void* context) {
  auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (int i = 0; i < guard_slots; ++i) {
    std::uintptr_t start = guard_start[i].load(), end = guard_end[i].load();
    if (end == 0 || at < start || at >= end) continue;
    // zeros from the faulting page to the mapping's end; the faulting
    // instruction runs again and reads them (mmap is a plain system call,
    // safe in a handler on Linux)
    std::uintptr_t from = at & ~(page - 1);
    void* z =
        mmap(reinterpret_cast<void*>(from), end - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (z == MAP_FAILED) break;
    guard_cut[i] = 1;
    return;
  }
  // not a guarded mapping: what would have happened without the guard
  if (guard_previous.sa_flags & SA_SIGINFO) {
    if (guard_previous.sa_sigaction) return guard_previous.sa_sigaction(sig, info, context);
  } else if (guard_previous.sa_handler != SIG_DFL && guard_previous.sa_handler != SIG_IGN) {
    return guard_previous.sa_handler(sig);
  }
  signal(SIGBUS, SIG_DFL);  // the fault comes again and ends the process
}

// The slot now watching [start, start + len) rounded to pages, or -1 when
// all are taken (then a shrinking file is a signal, as before).
int guard(const void* start, std::size_t len) {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, &guard_previous) == 0;
  }();
  if (!installed) return -1;
  for (int i = 0; i < guard_slots; ++i) {
    if (guard_end[i].load() != 0) continue;
    guard_cut[i] = 0;
    guard_start[i].store(reinterpret_cast<std::uintptr_t>(start));
    guard_end[i].store(reinterpret_cast<std::uintptr_t>(start) + (len + page - 1) / page * page);
    return i;
  }
  return -1;
}
}  // namespace

namespace {
// A file this small is read by one pread into the heap: no fstat, no
// mapping to set up and take down, no SIGBUS guard (a copy cannot be cut
// short by a writer), and nothing for check_whole to ask. Most state files
// are; a bigger one costs this one wasted read before it is mapped.
constexpr std::size_t small_limit = std::size_t(16) << 10;

// The whole of fd when it is a seekable file under small_limit bytes (one
// pread; a regular file reads short only at its end), else nullptr: a
// pipe (ESPIPE), a folder or a bigger file is left to the caller.
std::unique_ptr<char[]> read_small(int fd, std::size_t& len) {
  auto buf = std::make_unique_for_overwrite<char[]>(small_limit);
  ssize_t n;
  do n = pread(fd, buf.get(), small_limit, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0 || static_cast<std::size_t>(n) == small_limit) return nullptr;
  len = static_cast<std::size_t>(n);
  return buf;
}
}  // namespace

MappedFile::MappedFile(int fd, std::string_view subject) : fd_(fd), subject_(subject) {
  if ((small_ = read_small(fd, len_))) return;
  len_ = 0;
  struct stat st;
  if (fstat(fd, &st) != 0) fail_system(errno, "stat", subject);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    len_ = static_cast<std::size_t>(st.st_size);
    if (len_ >= huge_from && len_ <= populate_limit && huge_pages_offered()) {
      if (auto r = read_into_huge_pages(fd, len_, subject)) {
        buffer_ = r->raw;
        buffer_len_ = r->raw_len;
        map_ = r->text;
        len_ = r->len;
        return;
      }
    }
    int populate = len_ <= populate_limit ? MAP_POPULATE : 0;
    void* m = mmap(nullptr, len_, PROT_READ, MAP_PRIVATE | populate, fd, 0);
    if (m != MAP_FAILED) {
      map_ = m;
      guard_ = guard(m, len_);
      if (!populate) madvise(map_, len_, MADV_SEQUENTIAL);
      return;
    }
    len_ = 0;
  }
  owned_ = read_all(fd, subject);
}

MappedFile::MappedFile(MappedFile&& o) noexcept
    : fd_(o.fd_),
      map_(std::exchange(o.map_, nullptr)),
      len_(o.len_),
      buffer_(std::exchange(o.buffer_, nullptr)),
      buffer_len_(o.buffer_len_),
      released_(o.released_),
      guard_(std::exchange(o.guard_, -1)),
      small_(std::move(o.small_)),
      subject_(std::move(o.subject_)),
      owned_(std::move(o.owned_)) {}

MappedFile::~MappedFile() {
  if (guard_ >= 0) guard_end[guard_].store(0);
  if (buffer_) munmap(buffer_, buffer_len_);
  else if (map_) munmap(map_, len_);
}

void MappedFile::release_before(std::size_t off) {
  // a small file stays whole (it was populated at once); a big one gives
  // its pages back a few MiB at a time, not a system call per page
  if (!map_ || buffer_ || len_ <= populate_limit) return;
  off = std::min(off, len_) & ~(page - 1);
  if (off < released_ + release_step && off != (len_ & ~(page - 1))) return;
  madvise(static_cast<char*>(map_) + released_, off - released_, MADV_DONTNEED);
  released_ = off;
}

std::size_t MappedFile::offset_of(std::string_view b) const {
  const char* s = static_cast<const char*>(map_);
  if (!map_ || b.data() < s || b.data() + b.size() > s + len_) return std::string_view::npos;
  return static_cast<std::size_t>(b.data() - s);
}

bool MappedFile::cut_short() const { return guard_ >= 0 && guard_cut[guard_] != 0; }

void MappedFile::check_whole(std::size_t used) const {
  // a fault caught, or a shrink that the kernel met first (a write() from
  // the map fails with EFAULT instead)
  struct stat st;
  bool shrank = cut_short() || (map_ && !buffer_ && fstat(fd_, &st) == 0 &&
                                static_cast<std::size_t>(st.st_size) < std::min(len_, used));
  if (shrank) fail(Exit::system, "cannot read " + quoted(subject_) + ": the file shrank while it was read");
}

void copy_range(int in_fd, off_t at, int out_fd, std::size_t n, std::string_view subject) {
  while (n > 0) {
    ssize_t got = copy_file_range(in_fd, &at, out_fd, nullptr, n, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) break;
    if (got < 0) fail_system(errno, "write", subject);
    if (got == 0) fail_system(EIO, "write", subject);  // the file shrank under its lock
    n -= static_cast<std::size_t>(got);
  }
  // no kernel copy between these two: through memory, a buffer at a time
  std::string buf;
  while (n > 0) {
    buf.resize(std::min<std::size_t>(n, std::size_t(1) << 20));
    ssize_t got = pread(in_fd, buf.data(), buf.size(), at);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_system(errno, "read", subject);
    if (got == 0) fail_system(EIO, "read", subject);
    write_all(out_fd, std::string_view(buf.data(), static_cast<std::size_t>(got)), subject);
    at += got;
    n -= static_cast<std::size_t>(got);
  }
}

}  // namespace loopkit
