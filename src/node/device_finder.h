// Finds the block device of an attached Oxide disk by its NVMe serial in sysfs
// (<sysfs-root>/block/*/device/serial). Blocking file reads: call off the loop thread
// (uv_queue_work); the plain string helpers are pure and may run anywhere.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::node {

// The NVMe serial of an Oxide disk: the first 20 bytes of its name.
inline constexpr size_t kSerialLength = 20;

struct BlockDevice {
  std::string name;  // e.g. "nvme1n1" or "loop3"
  std::string node;  // "/dev/<name>"
  unsigned major = 0;
  unsigned minor = 0;
  std::string Number() const { return std::to_string(major) + ":" + std::to_string(minor); }
};

// A serial as sysfs prints it, without the trailing whitespace, newline and NUL padding.
std::string TrimSerial(std::string raw);
// True for the serial of a disk this plugin made: "csi-" + 16 lowercase hex digits.
bool LooksLikePluginSerial(const std::string& serial);

// Exactly one block device under `sysfs_root` whose serial equals `serial` (never a prefix
// match). NOT_FOUND when none, FAILED_PRECONDITION when several ("ambiguous") or when /dev/<name>
// is not a block device with the major:minor sysfs reports.
StatusOr<BlockDevice> FindDeviceBySerial(const std::string& sysfs_root, const std::string& serial);

// True when <sysfs_root>/block/<name> still exists and /dev/<name> is still that device.
bool DeviceStillPresent(const std::string& sysfs_root, const BlockDevice& device);

// Number of NVMe controllers in <sysfs_root>/class/nvme whose serial is not a plugin disk's
// (the boot disk and any disk this plugin does not manage).
int CountUnmanagedNvmeDevices(const std::string& sysfs_root);

}  // namespace oxide::node
