// Test support: a fixture that runs the real plugin in node mode against a fake sysfs tree in
// its temporary directory, with the node RPCs of NodeClient and real loop devices. Teardown stops
// the plugin, unmounts anything left under the directory (failing the test if it had to) and
// detaches the loop devices. Skips when not root. gtest main thread only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "csi.grpc.pb.h"
#include "support/loop_disk.h"
#include "support/node_client.h"
#include "support/plugin_setup.h"

namespace oxide::testing {

inline constexpr const char* kSerialA = "csi-0123456789abcdef";
inline constexpr const char* kSerialB = "csi-fedcba9876543210";

class NodeTest : public ::testing::Test, public NodeClient {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Extra plugin flags for the next StartPlugin().
  virtual std::vector<std::string> ExtraArgs() const { return {"--device-wait-seconds=2"}; }
  // Changes the plugin's setup (its environment) before SetUp starts it.
  virtual void PrepareSetup(PluginSetup&) {}
  void StartPlugin();
  void StopPlugin();  // SIGTERM and wait
  void KillPlugin();  // SIGKILL and wait

  // A new loop disk whose serial is `serial` (shown in the fake sysfs tree).
  LoopDisk& AddDisk(const std::string& serial, int size_mib = 512);

  std::string Path(const std::string& name) const { return setup_->File(name); }
  const std::string& sysfs() const { return sysfs_root_; }

  std::unique_ptr<PluginSetup> setup_;
  std::string sysfs_root_;  // the fake sysfs tree (<temp dir>/sys unless a test changes it)
  std::unique_ptr<PluginProcess> plugin_;
  std::vector<std::unique_ptr<LoopDisk>> disks_;
};

}  // namespace oxide::testing
