// A ready-to-run configuration of the real plugin for one test: a temporary directory holding
// the socket directory and the state database, and the flags and environment for a mode.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/plugin_process.h"
#include "support/temp_dir.h"

namespace oxide::testing {

inline constexpr const char* kTestToken = "oxide-token-test-5ecr3t-do-not-log";
inline constexpr const char* kTestInstanceId = "6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f";

class PluginSetup {
 public:
  explicit PluginSetup(std::string mode = "all");

  std::string socket_path() const { return dir_.File("sock/csi.sock"); }
  std::string socket_dir() const { return dir_.File("sock"); }
  std::string state_db() const { return dir_.File("state/state.db"); }
  std::string log_path() const { return dir_.File("plugin.log"); }
  std::string File(const std::string& name) const { return dir_.File(name); }

  std::vector<std::string> args;
  std::map<std::string, std::string> env;

  // Starts the plugin and waits until it serves; the returned process is running or the test
  // has failed with the plugin's log.
  std::unique_ptr<PluginProcess> Start() const;

 private:
  TempDir dir_;
};

}  // namespace oxide::testing
