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

}  // namespace loopkit
