// Errors that carry the contract's exit codes; messages follow git's style.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace loopkit {

enum class Exit : int { ok = 0, no = 1, usage = 2, data = 3, system = 4 };

class Error : public std::runtime_error {
public:
  Error(Exit code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Exit code() const { return code_; }

private:
  Exit code_;
};

// 'subject' quoted as git does: cannot rename 'state.json'
std::string quoted(std::string_view subject);

[[noreturn]] void fail(Exit code, const std::string& message);
[[noreturn]] void fail_usage(const std::string& message);
[[noreturn]] void fail_data(const std::string& message);
// "cannot VERB 'SUBJECT': strerror(err)", exit 4
[[noreturn]] void fail_system(int err, std::string_view verb, std::string_view subject);

// "is a symbolic link", "is a FIFO", "is a socket", "is a device", ... for
// messages about a file of that mode that is not a regular file.
std::string not_regular_reason(mode_t mode);
// exit 4: "cannot VERB 'path': is a symbolic link"
[[noreturn]] void fail_not_regular(std::string_view verb, std::string_view path, mode_t mode);

// After a commit point (a rename, link or append that made the change) no
// failure may turn the outcome into "unchanged": a caller that retries would
// apply it twice. Such a failure (the folder's fsync, printing the result) is
// a warning instead, and the exit status stays 0. The sys layer knows no
// tool, so the warning goes to a sink the entry point sets (cli: "TOOL:
// warning: message"); with none set it goes to stderr as "warning: message".
using WarningSink = void (*)(std::string_view message);
void set_warning_sink(WarningSink sink);
void warn(std::string_view message);
// warn("cannot VERB 'SUBJECT': strerror(err)")
void warn_system(int err, std::string_view verb, std::string_view subject);
// "cannot VERB 'SUBJECT': strerror(err)", the words of fail_system
std::string system_message(int err, std::string_view verb, std::string_view subject);

}  // namespace loopkit
