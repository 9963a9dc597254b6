#include "node/volume_stats.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oxide::node {

StatusOr<FilesystemUsage> UsageOf(const std::string& path) {
  struct statvfs info {};
  if (statvfs(path.c_str(), &info) != 0) {
    return Internal("statvfs " + path + ": " + std::strerror(errno));
  }
  auto bytes = [&](uint64_t blocks) { return static_cast<int64_t>(blocks * info.f_frsize); };
  FilesystemUsage usage;
  usage.bytes_total = bytes(info.f_blocks);
  usage.bytes_available = bytes(info.f_bavail);
  usage.bytes_used = bytes(info.f_blocks - info.f_bfree);
  usage.inodes_total = static_cast<int64_t>(info.f_files);
  usage.inodes_available = static_cast<int64_t>(info.f_favail);
  usage.inodes_used = static_cast<int64_t>(info.f_files - info.f_ffree);
  return usage;
}

StatusOr<int64_t> BlockDeviceBytes(const std::string& device_node) {
  int fd = open(device_node.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FailedPrecondition("cannot open " + device_node + ": " + std::strerror(errno));
  uint64_t size = 0;
  int rc = ioctl(fd, BLKGETSIZE64, &size);
  int error = errno;
  close(fd);
  if (rc != 0) return Internal("BLKGETSIZE64 " + device_node + ": " + std::strerror(error));
  return static_cast<int64_t>(size);
}

}  // namespace oxide::node
