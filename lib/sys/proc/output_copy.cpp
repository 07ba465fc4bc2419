#include "sys/proc/output_copy.hpp"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "sys/time/clock.hpp"
#include "sys/base/format.hpp"

namespace loopkit {

OutputLog::OutputLog(const std::string& path, uint64_t limit) {
  do fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  while (fd_ < 0 && errno == EINTR);
  head_max_ = limit / 2;
  tail_max_ = limit - head_max_;
}

OutputLog::~OutputLog() {
  if (fd_ >= 0) close(fd_);
}

// A failed write (ENOSPC, EIO) ends the log: what is in the file stays.
void OutputLog::write_at(uint64_t offset, const char* data, size_t n) {
  while (n > 0 && fd_ >= 0) {
    ssize_t w = pwrite(fd_, data, n, static_cast<off_t>(offset));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      error_ = w < 0 ? errno : ENOSPC;
      close(fd_);
      fd_ = -1;
      return;
    }
    data += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

void OutputLog::add(const char* data, size_t n) {
  if (fd_ < 0 || n == 0) return;
  const uint64_t limit = head_max_ + tail_max_;
  if (total_ < head_max_) head_last_ = data[std::min<uint64_t>(n, head_max_ - total_) - 1];
  if (limit == 0 || total_ + n <= limit) {  // all of it still fits: as it comes
    write_at(total_, data, n);
    if (limit != 0 && total_ + n > head_max_) {
      size_t skip = total_ < head_max_ ? static_cast<size_t>(head_max_ - total_) : 0;
      tail_.append(data + skip, n - skip);
    }
    total_ += n;
    return;
  }
  if (total_ < head_max_) {  // the rest of the head, as it comes
    size_t h = static_cast<size_t>(head_max_ - total_);
    write_at(total_, data, h);
    total_ += h;
    data += h;
    n -= h;
  }
  tail_.append(data, n);
  total_ += n;
  if (tail_.size() > 2 * tail_max_) tail_.erase(0, tail_.size() - tail_max_);
  dirty_ = true;
  flush(false);
}

// The head's end as it is, then the marker and the tail, the file cut there.
void OutputLog::rewrite_tail() {
  size_t keep = std::min<size_t>(tail_.size(), tail_max_);
  // the tail from the start of a line, when one starts in its first half
  size_t nl = tail_.find('\n', tail_.size() - keep);
  if (nl != std::string::npos && nl + 1 - (tail_.size() - keep) <= keep / 2) keep = tail_.size() - nl - 1;
  const uint64_t left_out = total_ - head_max_ - keep;
  std::string text = loopkit::format("{}[… {} bytes left out …]\n", head_last_ == '\n' ? "" : "\n", left_out);
  text.append(tail_, tail_.size() - keep, keep);
  write_at(head_max_, text.data(), text.size());
  if (fd_ >= 0 && ftruncate(fd_, static_cast<off_t>(head_max_ + text.size())) != 0) error_ = errno;
}

void OutputLog::flush(bool final) {
  if (!dirty_ || fd_ < 0) return;
  double now = monotonic_seconds();
  if (!final && now - rewritten_at_ < 1) return;
  rewrite_tail();
  dirty_ = false;
  rewritten_at_ = now;
}

bool open_output_pipes(OutputPipes& p) {
  for (int i = 0; i < 2; ++i) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    p.read[i] = fds[0];
    p.write[i] = fds[1];
  }
  return true;
}

OutputCopy::OutputCopy(OutputPipes pipes, OutputLog& log) : read_{pipes.read[0], pipes.read[1]}, log_(log) {}

OutputCopy::~OutputCopy() {
  for (int& fd : read_)
    if (fd >= 0) close(fd);
}

namespace {
// false once fd refused a write (the reader went away, a full disk)
bool write_out(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
}  // namespace

bool OutputCopy::pump(double seconds) {
  pollfd fds[2];
  nfds_t n = 0;
  int which[2];
  for (int i = 0; i < 2; ++i)
    if (read_[i] >= 0) {
      fds[n] = {read_[i], POLLIN, 0};
      which[n++] = i;
    }
  if (n == 0) return false;
  int ms = seconds > 0 ? static_cast<int>(seconds * 1000) : 0;
  if (poll(fds, n, ms) > 0) {
    char buf[65536];
    for (nfds_t k = 0; k < n; ++k) {
      if (fds[k].revents == 0) continue;
      int i = which[k];
      ssize_t got = read(read_[i], buf, sizeof buf);
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        close(read_[i]);
        read_[i] = -1;
        continue;
      }
      if (to_fd_[i]) to_fd_[i] = write_out(i + 1, buf, static_cast<size_t>(got));
      log_.add(buf, static_cast<size_t>(got));
    }
  }
  log_.flush(false);
  return open();
}

void OutputCopy::drain(double seconds) {
  const double end = monotonic_seconds() + seconds;
  while (open()) {
    double left = end - monotonic_seconds();
    if (left <= 0) break;
    pump(std::min(left, 0.1));
  }
  for (int& fd : read_)
    if (fd >= 0) {
      close(fd);
      fd = -1;
    }
  log_.flush(true);
}

}  // namespace loopkit
