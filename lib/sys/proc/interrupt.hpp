// SIGINT/SIGTERM turned into a flag, so a tool can finish its work (a final
// flush) instead of dying mid-way. System calls then fail with EINTR.
#pragma once
#include <string>

namespace loopkit {

void catch_termination_signals();  // SIGINT, SIGTERM, SIGHUP; no SA_RESTART
int termination_signal();          // 0 until one arrives

// A write past RLIMIT_FSIZE (ulimit -f, systemd's LimitFSIZE=) fails with
// EFBIG, and one to a broken pipe with EPIPE, instead of killing the
// process: the signal (SIGXFSZ, SIGPIPE) is caught by a handler that does
// nothing. Unlike SIG_IGN, a handler is not inherited across exec: a
// command the tool runs gets the default back. An inherited SIG_IGN stays.
void catch_file_size_limit();
void catch_broken_pipe();

enum class LineRead { line, eof, timeout, interrupted };
// Reads the next line of fd (without its newline) waiting at most `seconds`
// (negative: forever). Buffers across calls; one reader per fd.
LineRead read_line(int fd, std::string& line, double seconds);

}  // namespace loopkit
