// Creates and checks filesystems (mkfs.ext4 / mkfs.xfs, fsck.ext4). Runs external programs and
// blocks: call off the loop thread. The caller has established with ProbeDevice that the device
// is blank before calling MakeFilesystem.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::node {

// True for the filesystem types the node can create: "ext4" and "xfs".
bool IsSupportedFilesystem(const std::string& fs_type);

// `force` (mkfs.ext4 -F, mkfs.xfs -f) only to redo a format of our own that a crash interrupted.
Status MakeFilesystem(const std::string& device_node, const std::string& fs_type,
                      bool force = false);

// The check a filesystem needs before mounting: `fsck.ext4 -p` for ext4 (exit 0 or 1 is fine);
// nothing for xfs, whose log is replayed by the kernel at mount (xfs_repair is not an fsck).
Status CheckFilesystem(const std::string& device_node, const std::string& fs_type);

}  // namespace oxide::node
