// Keys of the volume_context and publish_context maps the controller hands to the node service.
// Constants only: any thread.
#pragma once

namespace oxide::csi_adapter {

// The full Oxide disk name (volume_context and publish_context).
inline constexpr const char* kDiskNameKey = "diskName";
// The NVMe serial the guest sees: the first 20 bytes of the disk name (publish_context).
inline constexpr const char* kNvmeSerialKey = "nvmeSerial";
// The Oxide disk's size in bytes, as a decimal string (publish_context). The node refuses to
// format a device whose size differs: a reused device name can still show another disk's size.
inline constexpr const char* kDiskSizeBytesKey = "diskSizeBytes";
// The Oxide disk's type, "distributed" or "local" (volume_context: CreateVolume, ListVolumes,
// ControllerGetVolume). Informational: the node does not read it.
inline constexpr const char* kDiskTypeKey = "diskType";

// Filesystem options (volume_context; the StorageClass parameters of the same names): what mkfs
// applies when NodeStageVolume formats a blank device. Decimal byte counts, or true/false for
// ext4BigAlloc. Checked by src/csi/filesystem_options.h on both sides.
inline constexpr const char* kFsBlockSizeKey = "fsBlockSize";          // ext4 -b, xfs -b size=
inline constexpr const char* kInodeSizeKey = "inodeSize";              // ext4 -I, xfs -i size=
inline constexpr const char* kBytesPerInodeKey = "bytesPerInode";      // ext4 -i
inline constexpr const char* kNumberOfInodesKey = "numberOfInodes";    // ext4 -N
inline constexpr const char* kExt4BigAllocKey = "ext4BigAlloc";        // ext4 -O bigalloc
inline constexpr const char* kExt4ClusterSizeKey = "ext4ClusterSize";  // ext4 -C

}  // namespace oxide::csi_adapter
