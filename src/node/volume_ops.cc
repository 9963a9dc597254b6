#include "node/volume_ops.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/log.h"

namespace oxide::node {
namespace {

namespace fs = std::filesystem;

}  // namespace

bool MountBelongsTo(const MountEntry& entry, const BlockDevice& device, bool block,
                    const std::string& path) {
  if (!block) return entry.major == device.major && entry.minor == device.minor;
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISBLK(info.st_mode) &&
         major(info.st_rdev) == device.major && minor(info.st_rdev) == device.minor;
}

namespace {

Status CreateDirectory(const std::string& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) return Internal("cannot create directory " + path + ": " + ec.message());
  if (!fs::is_directory(path, ec))
    return FailedPrecondition(path + " exists and is not a directory");
  return Status::Ok();
}

Status CreateFile(const std::string& path) {
  Status parent = CreateDirectory(fs::path(path).parent_path().string());
  if (!parent.ok()) return parent;
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Internal("cannot create file " + path + ": " + std::strerror(errno));
  close(fd);
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return FailedPrecondition(path + " exists and is not a regular file");
  }
  return Status::Ok();
}

Status RemovePath(const std::string& path) {
  struct stat info {};
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Internal("cannot inspect " + path + ": " + std::strerror(errno));
  }
  int rc = S_ISDIR(info.st_mode)   ? rmdir(path.c_str())
           : S_ISREG(info.st_mode) ? unlink(path.c_str())
                                   : 0;
  if (rc != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) {
      log::Warn("left a non-empty directory in place after unmounting it", {{"path", path}});
      return Status::Ok();
    }
    return Internal("cannot remove " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Status PublishBind(const BlockDevice& device, bool block, const std::string& source,
                   const std::string& target, bool readonly, const MountOptions& options) {
  auto mounts = ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  if (auto entry = FindMount(*mounts, target)) {
    if (!MountBelongsTo(*entry, device, block, target)) {
      return FailedPrecondition("something else (" + entry->source + ") is already mounted at " +
                                target + "; refusing to mount over it");
    }
    if (entry->ReadOnly() != readonly) {
      return FailedPrecondition(target + " is already mounted " +
                                (entry->ReadOnly() ? "read-only" : "read-write"));
    }
    return Status::Ok();
  }
  Status created = block ? CreateFile(target) : CreateDirectory(target);
  if (!created.ok()) return created;
  return BindMount(source, target, readonly, options);
}

bool MountOfVanishedDevice(const MountEntry& entry, bool block, const std::string& path) {
  unsigned device_major = entry.major;
  unsigned device_minor = entry.minor;
  if (block) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0 || !S_ISBLK(info.st_mode)) return false;
    device_major = major(info.st_rdev);
    device_minor = minor(info.st_rdev);
  }
  if (device_major == 0) return false;  // not a block device's filesystem (tmpfs, overlay, ...)
  const std::string sys =
      "/sys/dev/block/" + std::to_string(device_major) + ":" + std::to_string(device_minor);
  struct stat info {};
  return stat(sys.c_str(), &info) != 0 && errno == ENOENT;
}

std::vector<std::string> MountsOfDevice(const std::vector<MountEntry>& mounts,
                                        const BlockDevice& device, bool block) {
  std::vector<std::string> found;
  for (const MountEntry& entry : mounts) {
    const bool match = block ? entry.root == "/" + device.name && entry.fs_type == "devtmpfs"
                             : entry.major == device.major && entry.minor == device.minor;
    if (match) found.push_back(entry.mount_point);
  }
  return found;
}

Status UnmountAndRemove(const BlockDevice* device, bool block, const std::string& path,
                        bool remove) {
  for (int round = 0; round < 16; ++round) {
    auto mounts = ReadMountInfo();
    if (!mounts.ok()) return mounts.status();
    auto entry = FindMount(*mounts, path);
    if (!entry) return remove ? RemovePath(path) : Status::Ok();
    if (device == nullptr || !MountBelongsTo(*entry, *device, block, path)) {
      if (!MountOfVanishedDevice(*entry, block, path)) {
        return FailedPrecondition("the mount at " + path + " (" + entry->source + ", " +
                                  entry->fs_type +
                                  ") does not belong to this volume; refusing to unmount it");
      }
      log::Warn("unmounting a mount of a block device that no longer exists",
                {{"path", path}, {"source", entry->source}});
    }
    Status unmounted = Unmount(path);
    if (!unmounted.ok()) return unmounted;
  }
  return Internal("still mounted after 16 unmounts: " + path);
}

std::string VolumeProblem(bool present, const BlockDevice& device, bool block,
                          const std::string& path, bool expect_mount, bool expect_readonly) {
  if (!present) {
    return "the device " + device.node + " (" + device.Number() + ") has vanished";
  }
  auto mounts = ReadMountInfo();
  if (!mounts.ok()) return mounts.status().message();
  auto entry = FindMount(*mounts, path);
  if (!expect_mount) return "";
  if (!entry) return path + " is not mounted any more";
  if (!MountBelongsTo(*entry, device, block, path))
    return path + " holds another mount (" + entry->source + ")";
  if (!block && entry->ReadOnly() && !expect_readonly) {
    return path + " is mounted read-only although it was mounted read-write (filesystem errors?)";
  }
  return "";
}

}  // namespace oxide::node
