// SIGINT/SIGTERM turned into a flag, so a tool can finish its work (a final
// flush) instead of dying mid-way. System calls then fail with EINTR.
#pragma once
#include <string>

namespace loopkit {

void catch_termination_signals();  // SIGINT, SIGTERM, SIGHUP; no SA_RESTART
int termination_signal();          // 0 until one arrives

enum class LineRead { line, eof, timeout, interrupted };
// Reads the next line of fd (without its newline) waiting at most `seconds`
// (negative: forever). Buffers across calls; one reader per fd.
LineRead read_line(int fd, std::string& line, double seconds);

}  // namespace loopkit
