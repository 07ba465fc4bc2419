// Running a command as a child whose life the caller shares, as timeout(1)
// and tini do: termination signals are passed on, a callback runs at a fixed
// interval meanwhile, and the status follows the shell's conventions.
#pragma once
#include <functional>
#include <string>
#include <vector>

namespace loopkit {

// While alive, SIGINT, SIGTERM, SIGHUP and SIGCHLD are blocked, so none of
// them can kill the caller between taking a resource and handing it back;
// they wait, pending, to be read by pause() or run_child(). Those ignored
// when the process started (nohup) stay ignored. Destroying it
// does not unblock them: a signal still pending then dies with the process.
class HeldSignals {
public:
  HeldSignals();
  // Sleep up to seconds; the number of a termination signal that arrived
  // meanwhile (and is consumed), else 0.
  int pause(double seconds);
  int received() const { return received_; }

private:
  int received_ = 0;
};

struct ChildStatus {
  int status = 0;      // exit code; 128+N if killed by signal N; 126/127 as shells
  int exec_errno = 0;  // when the command could not be run: why
};

// Run argv (searching PATH) and wait for it. Termination signals sent to us
// with kill(2) are forwarded to it; those the terminal sends already reach it
// (same process group) and are not sent twice. on_tick runs every
// tick_seconds of real time while the command runs; it must not throw.
// Requires a HeldSignals in scope.
ChildStatus run_child(const std::vector<std::string>& argv, double tick_seconds, const std::function<void()>& on_tick);

// End the child of run_child as a SIGTERM sent to us would: forwarded to it.
void terminate_child();

// Run body in a grandchild that outlives us: its own session, standard
// input and outputs on /dev/null (a caller's $(...) is not held open), no
// other descriptors, no blocked signals; it exits when body returns or
// throws. Returns once the grandchild has been started.
void start_detached(const std::function<void()>& body);

// This process replaced by the program at path with argv (argv[0] as given,
// null-terminated). Returns only by throwing: "cannot run 'PATH'", exit 4.
[[noreturn]] void exec_replacing(const std::string& path, char* const* argv);

// The folder of the running executable (/proc/self/exe, links resolved).
std::string self_folder();

}  // namespace loopkit
