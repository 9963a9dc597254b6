#include "csi/disk_type_parameter.h"

namespace oxide::csi_adapter {

StatusOr<std::string> ParseDiskType(const std::string& value) {
  if (value == backend::kDiskTypeLocal) return std::string(backend::kDiskTypeLocal);
  if (value == backend::kDiskTypeDistributed) return std::string(backend::kDiskTypeDistributed);
  return InvalidArgument(std::string("parameter ") + kDiskTypeParameter + "=\"" + value +
                         "\" is not valid; use distributed (the default: replicated across "
                         "sleds) or local (sled-local NVMe)");
}

Status CheckDiskTypeBlockSize(const std::string& disk_type, uint64_t block_size,
                              bool block_size_given) {
  if (disk_type != backend::kDiskTypeLocal || !block_size_given ||
      block_size == kLocalDiskBlockSize) {
    return Status::Ok();
  }
  return InvalidArgument(std::string("parameter blockSize=\"") + std::to_string(block_size) +
                         "\" does not go with " + kDiskTypeParameter +
                         "=\"local\": Oxide gives local disks 4096-byte blocks; leave blockSize "
                         "out or set it to 4096");
}

}  // namespace oxide::csi_adapter
