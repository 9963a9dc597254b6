// The StorageClass parameter diskType: which Oxide disk backend a volume gets, `distributed`
// (Crucible, replicated across sleds; the default) or `local` (sled-local NVMe), and the rule it
// sets for blockSize (Oxide gives local disks 4096-byte blocks). Pure functions: any thread.
#pragma once

#include <cstdint>
#include <string>

#include "backend/oxide_types.h"
#include "util/status.h"

namespace oxide::csi_adapter {

inline constexpr const char* kDiskTypeParameter = "diskType";
// The block size Oxide gives every local disk.
inline constexpr uint64_t kLocalDiskBlockSize = 4096;

// The Oxide disk_type (backend::kDiskTypeLocal or kDiskTypeDistributed) for a diskType value;
// INVALID_ARGUMENT naming the value and what is accepted otherwise.
StatusOr<std::string> ParseDiskType(const std::string& value);

// INVALID_ARGUMENT naming both parameters when a local disk is given a blockSize other than 4096.
Status CheckDiskTypeBlockSize(const std::string& disk_type, uint64_t block_size,
                              bool block_size_given);

}  // namespace oxide::csi_adapter
