#include "sys/base/error.hpp"

#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace loopkit {

std::string quoted(std::string_view subject) {
  std::string s;
  s.reserve(subject.size() + 2);
  s += '\'';
  s += subject;
  s += '\'';
  return s;
}

void fail(Exit code, const std::string& message) { throw Error(code, message); }
void fail_usage(const std::string& message) { throw Error(Exit::usage, message); }
void fail_data(const std::string& message) { throw Error(Exit::data, message); }

std::string system_message(int err, std::string_view verb, std::string_view subject) {
  std::string m = "cannot ";
  m += verb;
  if (!subject.empty()) {
    m += ' ';
    m += quoted(subject);
  }
  m += ": ";
  m += std::strerror(err);
  return m;
}

void fail_system(int err, std::string_view verb, std::string_view subject) {
  throw Error(Exit::system, system_message(err, verb, subject));
}

namespace {
WarningSink g_warning_sink = nullptr;
}

void set_warning_sink(WarningSink sink) { g_warning_sink = sink; }

void warn(std::string_view message) {
  if (g_warning_sink) {
    g_warning_sink(message);
    return;
  }
  std::string line = "warning: ";
  line += message;
  line += '\n';
  std::fputs(line.c_str(), stderr);
}

void warn_system(int err, std::string_view verb, std::string_view subject) { warn(system_message(err, verb, subject)); }

std::string not_regular_reason(mode_t mode) {
  if (S_ISLNK(mode)) return "is a symbolic link";
  if (S_ISFIFO(mode)) return "is a FIFO";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  if (S_ISDIR(mode)) return "is a folder";
  return "is not a regular file";
}

void fail_not_regular(std::string_view verb, std::string_view path, mode_t mode) {
  fail(Exit::system, "cannot " + std::string(verb) + " " + quoted(path) + ": " + not_regular_reason(mode));
}

}  // namespace loopkit
