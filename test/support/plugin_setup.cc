#include "support/plugin_setup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace oxide::testing {

PluginSetup::PluginSetup(std::string mode) {
  mkdir(socket_dir().c_str(), 0755);
  args = {"--endpoint=unix://" + socket_path(), "--mode=" + mode, "--state-db=" + state_db(),
          "--shutdown-grace=5s"};
  env = {{"OXIDE_HOST", "https://oxide.invalid"},
         {"OXIDE_TOKEN", kTestToken},
         {"OXIDE_PROJECT", "test-project"},
         {"OXIDE_INSTANCE_ID", kTestInstanceId}};
}

std::unique_ptr<PluginProcess> PluginSetup::Start() const {
  auto process = std::make_unique<PluginProcess>(args, env, log_path());
  bool serving = process->WaitServing(socket_path());
  EXPECT_TRUE(serving) << "the plugin did not start serving; its log:\n" << process->Log();
  return process;
}

}  // namespace oxide::testing
