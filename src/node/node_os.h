// The node's operating-system work behind one interface: find a disk's block device, plan and
// carry out formatting and mounting, bind-mount for publishing, unmount, and read a volume's
// health and usage. HostOs does it on this machine (sysfs, blkid, mkfs, fsck, mount(2), statvfs);
// tests put a double in its place that can fail any call. Every method blocks: call them from
// libuv worker threads (RunBlocking), never on the loop thread. Implementations must be safe to
// call from several worker threads at once.
#pragma once

#include <string>

#include "node/device_finder.h"
#include "node/mounter.h"
#include "node/volume_ops.h"
#include "node/volume_stats.h"
#include "util/status.h"

namespace oxide::node {

class NodeOs {
 public:
  virtual ~NodeOs() = default;

  // See FindDeviceBySerial: NOT_FOUND while the device has not appeared.
  virtual StatusOr<BlockDevice> FindDevice(const std::string& serial) = 0;
  // See PlanStaging, FormatAndMount, PublishBind and UnmountAndRemove (node/volume_ops.h).
  virtual StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const std::string& path,
                                          const std::string& fs_type, bool format_intent) = 0;
  virtual Status FormatAndMount(const BlockDevice& device, const std::string& path,
                                const std::string& fs_type, const MountOptions& options,
                                bool format, bool redo) = 0;
  virtual Status PublishBind(const BlockDevice& device, bool block, const std::string& source,
                             const std::string& target, bool readonly,
                             const MountOptions& options) = 0;
  virtual Status UnmountAndRemove(const BlockDevice* device, bool block, const std::string& path,
                                  bool remove) = 0;
  // See VolumeProblem: empty when healthy.
  virtual std::string VolumeProblem(const BlockDevice& device, bool block, const std::string& path,
                                    bool expect_mount, bool expect_readonly) = 0;
  virtual StatusOr<FilesystemUsage> UsageOf(const std::string& path) = 0;
  virtual StatusOr<int64_t> BlockDeviceBytes(const std::string& device_node) = 0;
};

// This machine, with sysfs read under `sysfs_root` ("/sys" in production).
class HostOs final : public NodeOs {
 public:
  explicit HostOs(std::string sysfs_root) : sysfs_root_(std::move(sysfs_root)) {}

  StatusOr<BlockDevice> FindDevice(const std::string& serial) override;
  StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const std::string& path,
                                  const std::string& fs_type, bool format_intent) override;
  Status FormatAndMount(const BlockDevice& device, const std::string& path,
                        const std::string& fs_type, const MountOptions& options, bool format,
                        bool redo) override;
  Status PublishBind(const BlockDevice& device, bool block, const std::string& source,
                     const std::string& target, bool readonly,
                     const MountOptions& options) override;
  Status UnmountAndRemove(const BlockDevice* device, bool block, const std::string& path,
                          bool remove) override;
  std::string VolumeProblem(const BlockDevice& device, bool block, const std::string& path,
                            bool expect_mount, bool expect_readonly) override;
  StatusOr<FilesystemUsage> UsageOf(const std::string& path) override;
  StatusOr<int64_t> BlockDeviceBytes(const std::string& device_node) override;

 private:
  const std::string sysfs_root_;
};

}  // namespace oxide::node
