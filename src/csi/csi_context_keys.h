// Keys of the volume_context and publish_context maps the controller hands to the node service.
// Constants only: any thread.
#pragma once

namespace oxide::csi_adapter {

// The full Oxide disk name (volume_context and publish_context).
inline constexpr const char* kDiskNameKey = "diskName";
// The NVMe serial the guest sees: the first 20 bytes of the disk name (publish_context).
inline constexpr const char* kNvmeSerialKey = "nvmeSerial";

}  // namespace oxide::csi_adapter
