// Runs the real oxide-csi-plugin binary for a test: fork/exec with the given flags and
// environment, stderr captured to a file, and helpers to wait until it serves, signal it and
// collect its exit code. Test thread only.
#pragma once

#include <grpcpp/channel.h>
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/test_environment.h"

namespace oxide::testing {

// Path of a built binary of this project, passed to the tests by CMake. The environment variables
// OXIDE_CSI_TEST_PLUGIN_BIN and OXIDE_CSI_TEST_CTL_BIN replace them (the sanitizer steps run
// instrumented ones; OXIDE_CSI_TEST_SIM_BIN does the same for the simulator).
std::string PluginBinary();
std::string CtlBinary();

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a program to completion (with a timeout) and captures its output.
ProcessResult RunProgram(const std::string& binary, const std::vector<std::string>& args,
                         const std::map<std::string, std::string>& env = {},
                         std::chrono::seconds timeout = std::chrono::seconds(30));

class PluginProcess {
 public:
  // Starts the plugin; `env` is the whole environment it gets (plus a default PATH unless `env`
  // has one).
  PluginProcess(std::vector<std::string> args, std::map<std::string, std::string> env,
                std::string log_path);
  // Stops it if still running (SIGTERM, then SIGKILL) and fails the test if its log holds a
  // sanitizer report.
  ~PluginProcess();
  PluginProcess(const PluginProcess&) = delete;
  PluginProcess& operator=(const PluginProcess&) = delete;

  // Waits until `socket_path` accepts connections (or the process exits). True when serving.
  bool WaitServing(const std::string& socket_path,
                   std::chrono::milliseconds timeout = std::chrono::seconds(15));
  void Signal(int signum);
  // Waits for the process to exit; returns its exit code, or -1 on timeout / killed by signal.
  int WaitExit(std::chrono::milliseconds timeout = std::chrono::seconds(30));
  bool running();
  pid_t pid() const { return pid_; }
  std::string Log() const;
  // Waits until the log holds `text` (woken by inotify when the log is written), or until the
  // process exits or `timeout` passes. True when found.
  bool WaitForLog(const std::string& text,
                  std::chrono::milliseconds timeout = std::chrono::seconds(15));

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string log_path_;
};

// A gRPC channel to a unix socket.
std::shared_ptr<grpc::Channel> UnixChannel(const std::string& socket_path);

}  // namespace oxide::testing
