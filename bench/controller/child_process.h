// A helper program the benchmark runs beside the plugin (the peer CSI driver): fork/exec with its
// output appended to a log file, stopped with SIGTERM (then SIGKILL) at the latest when destroyed.
// Main thread only.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace oxide::bench {

// True when a unix socket at `path` accepts a connection now.
bool UnixSocketAccepts(const std::string& path);

class ChildProcess {
 public:
  // Starts `binary` with `args` and the benchmark's environment; pid() is -1 when fork failed.
  ChildProcess(const std::string& binary, const std::vector<std::string>& args,
               const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();
  // Waits until `socket_path` accepts connections; false when the process exited or time ran out.
  bool WaitSocket(const std::string& socket_path, std::chrono::milliseconds timeout);
  // SIGTERM, then SIGKILL after `grace`; waits for the exit.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(10));

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
};

}  // namespace oxide::bench
