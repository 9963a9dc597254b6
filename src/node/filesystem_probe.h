// What a block device holds, so that the node never formats a disk with data on it: blkid's
// low-level probe (filesystems, partition tables, RAID/LVM signatures) plus a check that the
// first 8 MiB and the last MiB are zeros. Blocking (blkid runs under `limits.command`): call off
// the loop thread; safe from several worker threads at once.
#pragma once

#include <string>

#include "node/command_runner.h"
#include "util/status.h"

namespace oxide::node {

struct DeviceContent {
  enum class Kind {
    kBlank,           // no signature and the first 8 MiB and the last MiB are zeros: safe to format
    kFilesystem,      // fs_type says which
    kPartitionTable,  // detail says which (gpt, dos, ...)
    kUnknownData,     // no signature at all, but the first 8 MiB or the last MiB is not zeros
    kOtherSignature,  // a signature that is not a filesystem (LVM, RAID, swap, LUKS, ...), or
                      // several (blkid: ambivalent)
  };
  Kind kind = Kind::kUnknownData;
  std::string fs_type;
  std::string detail;
  std::string uuid;  // blkid's UUID of a kFilesystem (empty when it shows none)
};

// DEADLINE_EXCEEDED when blkid was killed at its time limit.
StatusOr<DeviceContent> ProbeDevice(const std::string& device_node, const CommandLimits& limits);

}  // namespace oxide::node
