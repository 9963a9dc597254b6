#include "node/node_os.h"

namespace oxide::node {

StatusOr<BlockDevice> HostOs::FindDevice(const std::string& serial) {
  return FindDeviceBySerial(sysfs_root_, serial);
}

StatusOr<StagePlan> HostOs::PlanStaging(const BlockDevice& device, const std::string& path,
                                        const std::string& fs_type, bool format_intent) {
  return node::PlanStaging(device, path, fs_type, format_intent);
}

Status HostOs::FormatAndMount(const BlockDevice& device, const std::string& path,
                              const std::string& fs_type, const MountOptions& options, bool format,
                              bool redo) {
  return node::FormatAndMount(device, path, fs_type, options, format, redo);
}

Status HostOs::PublishBind(const BlockDevice& device, bool block, const std::string& source,
                           const std::string& target, bool readonly, const MountOptions& options) {
  return node::PublishBind(device, block, source, target, readonly, options);
}

Status HostOs::UnmountAndRemove(const BlockDevice* device, bool block, const std::string& path,
                                bool remove) {
  return node::UnmountAndRemove(device, block, path, remove);
}

std::string HostOs::VolumeProblem(const BlockDevice& device, bool block, const std::string& path,
                                  bool expect_mount, bool expect_readonly) {
  return node::VolumeProblem(sysfs_root_, device, block, path, expect_mount, expect_readonly);
}

StatusOr<FilesystemUsage> HostOs::UsageOf(const std::string& path) {
  return node::UsageOf(path);
}

StatusOr<int64_t> HostOs::BlockDeviceBytes(const std::string& device_node) {
  return node::BlockDeviceBytes(device_node);
}

}  // namespace oxide::node
