// Usage figures of a mounted volume (statvfs) and the size of a block device (BLKGETSIZE64).
// Blocking system calls: call off the loop thread.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace oxide::node {

struct FilesystemUsage {
  int64_t bytes_total = 0;
  int64_t bytes_used = 0;
  int64_t bytes_available = 0;
  int64_t inodes_total = 0;
  int64_t inodes_used = 0;
  int64_t inodes_available = 0;
};

StatusOr<FilesystemUsage> UsageOf(const std::string& path);
StatusOr<int64_t> BlockDeviceBytes(const std::string& device_node);

}  // namespace oxide::node
