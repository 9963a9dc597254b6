// Test support: starts the real oxide-sim binary on --port 0, reads the port from its
// first stdout line, and stops it (SIGTERM or SIGKILL). Used from the gtest main thread.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace sim_test {

class SimProcess {
 public:
  // Starts oxide-sim with `args` (plus --port 0). Fails the current test on error.
  explicit SimProcess(std::vector<std::string> args = {});
  ~SimProcess();
  SimProcess(const SimProcess&) = delete;
  SimProcess& operator=(const SimProcess&) = delete;

  bool running() const { return pid_ > 0; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string base_url() const;
  // SIGTERM and wait; returns the exit status (as from waitpid) or -1.
  int stop();
  // SIGKILL and wait.
  void kill_hard();
  // Everything the process wrote to stderr so far (after it stopped: all of it).
  std::string stderr_text() const;

  static std::string binary_path();
  static constexpr const char* kToken = "oxide-token-test-secret";

 private:
  void start(std::vector<std::string> args);
  pid_t pid_ = -1;
  int port_ = 0;
  bool tls_ = false;
  std::string stderr_path_;
};

// Runs oxide-sim with args to completion (for --help / bad flags); returns exit code and
// captures stdout+stderr.
int run_sim_to_exit(const std::vector<std::string>& args, std::string* output);

}  // namespace sim_test
