#include "node_fixture.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "support/test_environment.h"

namespace oxide::testing {

void NodeTest::SetUp() {
  if (geteuid() != 0) OXIDE_SKIP_UNLESS_CI("node tests need root (loop devices, mkfs, mount)");
  setup_ = std::make_unique<PluginSetup>("node");
  sysfs_root_ = setup_->File("sys");
  std::filesystem::create_directories(sysfs() + "/block");
  PrepareSetup(*setup_);
  StartPlugin();
}

void NodeTest::TearDown() {
  if (!setup_) return;
  StopPlugin();
  std::vector<std::string> left = MountsUnder(setup_->File(""));
  EXPECT_TRUE(left.empty()) << "mounts left behind, e.g. " << (left.empty() ? "" : left.front());
  // Deepest first, lazily: a failed test must not leave mounts or busy loop devices behind.
  std::sort(left.begin(), left.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
  for (const std::string& path : left)
    umount2(path.c_str(), MNT_DETACH);
  disks_.clear();
  setup_.reset();
}

void NodeTest::StartPlugin() {
  std::vector<std::string> args = setup_->args;
  args.push_back("--sysfs-root=" + sysfs());
  for (const std::string& arg : ExtraArgs())
    args.push_back(arg);
  PluginSetup& setup = *setup_;
  std::vector<std::string> saved = setup.args;
  setup.args = args;
  plugin_ = setup.Start();
  setup.args = saved;
  Connect(setup.socket_path());
}

void NodeTest::StopPlugin() {
  if (!plugin_) return;
  plugin_->Signal(SIGTERM);
  EXPECT_EQ(plugin_->WaitExit(), 0) << plugin_->Log();
  plugin_.reset();
}

void NodeTest::KillPlugin() {
  plugin_->Signal(SIGKILL);
  plugin_->WaitExit();
  plugin_.reset();
}

LoopDisk& NodeTest::AddDisk(const std::string& serial, int size_mib) {
  std::string image = Path("disk" + std::to_string(disks_.size()) + ".img");
  disks_.push_back(std::make_unique<LoopDisk>(image, sysfs(), serial, size_mib));
  EXPECT_TRUE(disks_.back()->ok()) << "cannot attach a loop device";
  return *disks_.back();
}

}  // namespace oxide::testing
