// What a block device holds, so that the node never formats a disk with data on it: blkid's
// low-level probe (filesystems, partition tables, RAID/LVM signatures) plus a check that the
// first 8 MiB and the last MiB are zeros. Blocking: call off the loop thread.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::node {

struct DeviceContent {
  enum class Kind {
    kBlank,       // no signature and the first 8 MiB and the last MiB are zeross: safe to format
    kFilesystem,  // fs_type says which
    kPartitionTable,  // detail says which (gpt, dos, ...)
    kUnknownData,     // no signature but not zeros, or another signature (LVM, RAID, swap, ...)
  };
  Kind kind = Kind::kUnknownData;
  std::string fs_type;
  std::string detail;
};

StatusOr<DeviceContent> ProbeDevice(const std::string& device_node);

}  // namespace oxide::node
