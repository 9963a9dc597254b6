// Test support for end-to-end tests of volumes on a node: the real plugin in --mode=all against
// oxide-sim with guest device emulation (a disk attached to the running guest_local instance
// "node-1" appears as a real loop device with its NVMe serial in the simulator's sysfs tree),
// and helpers that attach + stage + publish a volume and tear that down again. Needs root (the
// tests skip without it). gtest main thread only.
#pragma once

#include <string>
#include <vector>

#include "controller_fixture.h"
#include "support/temp_dir.h"

namespace oxide::testing {

class GuestVolumeTest : public ControllerTest {
 protected:
  void SetUp() override;
  std::string mode() const override { return "all"; }
  std::vector<std::string> sim_args() const override;
  std::vector<std::string> plugin_args() const override;
  void BeforePluginStart() override;

  csi::v1::NodeStageVolumeRequest StageRequest(const csi::v1::Volume& volume,
                                               const csi::v1::ControllerPublishVolumeResponse& pub,
                                               const std::string& staging);
  csi::v1::NodePublishVolumeRequest PublishRequest(
      const csi::v1::Volume& volume, const csi::v1::ControllerPublishVolumeResponse& pub,
      const std::string& staging, const std::string& target);

  // ControllerPublish to node-1, NodeStage (ext4) at `staging`, NodePublish at `target`.
  void MountAndCheck(csi::v1::Node::Stub& node, const csi::v1::Volume& volume,
                     const std::string& staging, const std::string& target);
  void MountAndCheck(csi::v1::Node::Stub& node, const csi::v1::Volume& volume) {
    MountAndCheck(node, volume, staging_, target_);
  }
  // NodeUnpublish + NodeUnstage; the disk stays attached.
  void Unmount(csi::v1::Node::Stub& node, const csi::v1::Volume& volume, const std::string& staging,
               const std::string& target);
  // Unmount, then ControllerUnpublish from node-1.
  void UnmountAndDetach(csi::v1::Node::Stub& node, const csi::v1::Volume& volume,
                        const std::string& staging, const std::string& target);
  void UnmountAndDetach(csi::v1::Node::Stub& node, const csi::v1::Volume& volume) {
    UnmountAndDetach(node, volume, staging_, target_);
  }

  TempDir work_;
  std::string node_id_;
  std::string staging_ = work_.File("staging");
  std::string target_ = work_.File("pods/pod-1/volume");
};

}  // namespace oxide::testing
