// The fixture of the node OS helper tests (node_os_tests): real loop devices on sparse files in a
// temporary directory, mount points beside them, and whatever a failed test left mounted there
// unmounted at the end. Needs root: skips the test otherwise. Test thread only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "node/command_runner.h"
#include "support/loop_disk.h"
#include "support/temp_dir.h"

namespace oxide::testing {

class NodeOsDiskTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // A new loop device of `size_mib` MiB on <tmp>/<name>.img (existing content kept); a test
  // failure when it cannot be made.
  LoopDisk& Disk(const std::string& name, int size_mib = 512);
  // A new directory <tmp>/<name>.
  std::string MountPoint(const std::string& name);
  // blkid's UUID of the filesystem on `node` ("" when none).
  static std::string BlkidUuid(const std::string& node);
  // Writes zeros over [from, to) of `node` and flushes them to the device.
  static void Zero(const std::string& node, long from, long to);
  // Whether `path` is a mount point now (/proc/self/mountinfo).
  static bool IsMounted(const std::string& path);

  const node::CommandLimits limits_;
  TempDir tmp_;
  std::vector<std::unique_ptr<LoopDisk>> disks_;
};

}  // namespace oxide::testing
