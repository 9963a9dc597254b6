// Keys of the CSI publish_context / volume_context maps shared by the controller (which writes
// them) and the node (which reads them). Constants only: any thread.
#pragma once

namespace oxide::engine {

// The full Oxide disk name ("csi-" + 16 lowercase hex digits, optionally "-<suffix>"); in
// volume_context (CreateVolume) and publish_context (ControllerPublishVolume).
inline constexpr const char* kDiskNameKey = "diskName";
// The first 20 bytes of the disk name: the NVMe serial the guest sees (publish_context).
inline constexpr const char* kNvmeSerialKey = "nvmeSerial";

}  // namespace oxide::engine
