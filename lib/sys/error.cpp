#include "sys/error.hpp"

#include <cstring>

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
void fail_no(const std::string& message) { throw Error(Exit::no, message); }
void fail_usage(const std::string& message) { throw Error(Exit::usage, message); }
void fail_data(const std::string& message) { throw Error(Exit::data, message); }

void fail_system(int err, std::string_view verb, std::string_view subject) {
  std::string m = "cannot ";
  m += verb;
  if (!subject.empty()) {
    m += ' ';
    m += quoted(subject);
  }
  m += ": ";
  m += std::strerror(err);
  throw Error(Exit::system, m);
}

}  // namespace loopkit
