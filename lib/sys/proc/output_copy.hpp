// A command's stdout and stderr copied, as they come, to our own stdout and
// stderr and to one log file in arrival order (tee(1) for two streams, with
// a bounded file): agent-run --output.
#pragma once
#include <cstdint>
#include <string>

namespace loopkit {

// The log file, bounded: past limit bytes it keeps the first limit/2 (the
// head, written as it comes) and the last limit - limit/2 (the tail), with
// one line "[… N bytes left out …]" between. The tail is rewritten in the
// file at most once a second (and at the end), so a kill -9 or a crash of
// the writer loses at most the last second of the output past the head;
// the head is never lost. limit 0: no bound.
class OutputLog {
public:
  static constexpr uint64_t default_limit = 1 << 20;
  // opens path (created or truncated; a symlink is refused); errno and an
  // unusable log on failure (is_open false)
  OutputLog(const std::string& path, uint64_t limit);
  ~OutputLog();
  OutputLog(const OutputLog&) = delete;
  OutputLog& operator=(const OutputLog&) = delete;
  bool is_open() const { return fd_ >= 0; }
  void add(const char* data, size_t n);
  // the tail as it is now into the file: when due (a second since the last
  // rewrite) or when final
  void flush(bool final);
  int error() const { return error_; }  // the first write's errno (0: none)
  uint64_t total() const { return total_; }

private:
  void write_at(uint64_t offset, const char* data, size_t n);
  void rewrite_tail();
  int fd_ = -1;
  int error_ = 0;
  uint64_t head_max_ = 0, tail_max_ = 0;  // 0, 0: no bound
  uint64_t total_ = 0;                    // bytes seen
  std::string tail_;                      // the bytes past the head (the last tail_max_ of them count)
  char head_last_ = '\n';                 // the head's last byte
  bool dirty_ = false;
  double rewritten_at_ = 0;
};

// The two pipes of a command's stdout and stderr, read by us.
struct OutputPipes {
  int read[2] = {-1, -1};   // ours
  int write[2] = {-1, -1};  // the command's 1 and 2
};
// Both pipes (close-on-exec); false and errno on failure.
bool open_output_pipes(OutputPipes& p);

// Copies what the pipes bring to fds 1 and 2 and to the log. A write error
// on 1 or 2 (EPIPE: the reader went away; SIGPIPE must be ignored) ends the
// copy to that descriptor only: the log still gets everything.
class OutputCopy {
public:
  OutputCopy(OutputPipes pipes, OutputLog& log);
  ~OutputCopy();
  bool open() const { return read_[0] >= 0 || read_[1] >= 0; }
  // waits up to seconds for output, copies what came; false once both pipes
  // are at their end
  bool pump(double seconds);
  // copies until both pipes end or seconds pass (a process out of the
  // group that holds a pipe open must not keep us), then closes them
  void drain(double seconds);

private:
  int read_[2];
  bool to_fd_[2] = {true, true};
  OutputLog& log_;
};

}  // namespace loopkit
