#include "node/node_os.h"

#include <algorithm>

#include "node/encrypted_volume.h"
#include "node/volume_ops.h"

namespace oxide::node {
namespace {

std::string Describe(const MountEntry& entry) {
  return entry.source + " (" + entry.fs_type + ", device " + std::to_string(entry.major) + ":" +
         std::to_string(entry.minor) + ")";
}

}  // namespace

StatusOr<BlockDevice> HostOs::FindDevice(const std::string& serial) {
  return FindDeviceBySerial(sysfs_root_, serial);
}

StatusOr<BlockDevice> HostOs::FindVolumeDevice(const std::string& serial) {
  StatusOr<BlockDevice> disk = FindDeviceBySerial(sysfs_root_, serial);
  if (!disk.ok()) return disk;
  return VolumeDeviceOf(disk, serial, limits_);
}

StatusOr<StagePlan> HostOs::PlanStaging(const BlockDevice& device, const StageInputs& inputs) {
  return node::PlanStaging(device, inputs, limits_);
}

StatusOr<BlockDevice> HostOs::CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                              const StageInputs& inputs) {
  // The plan was made on this device some time ago (a commit, maybe a wait for a format slot):
  // it must still be the disk with the serial before mkfs or mount touch it.
  StatusOr<BlockDevice> now = FindDeviceBySerial(sysfs_root_, inputs.serial);
  if (!now.ok() || now->Number() != device.Number()) {
    return Unavailable("the volume's disk (serial " + inputs.serial + ") is no longer " +
                       device.node + " (" + device.Number() + "); retry the stage");
  }
  return node::CarryOutStaging(device, plan, inputs, limits_, xfs_profile_);
}

StatusOr<BlockDevice> HostOs::OpenEncryptedBlock(const BlockDevice& device,
                                                 const StageInputs& inputs) {
  StatusOr<EncryptedDisk> disk =
      OpenEncryptedDisk(device, inputs.serial, inputs.passphrase, false, limits_);
  if (!disk.ok()) return disk.status();
  if (disk->mapper) return *disk->mapper;
  return EncryptBlankDisk(device, inputs.serial, inputs.passphrase, false, limits_);
}

void HostOs::CloseUnusedMappings(const std::vector<std::string>& keep_serials) {
  node::CloseUnusedMappings(keep_serials, limits_);
}

StatusOr<BlockDevice> HostOs::VerifyStaged(const std::string& serial, bool block,
                                           const std::string& staging_path) {
  StatusOr<BlockDevice> device = FindVolumeDevice(serial);
  if (!device.ok() || block) return device;
  auto mounts = ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  auto entry = FindMount(*mounts, staging_path);
  if (!entry) {
    return FailedPrecondition("nothing is mounted at the staging path " + staging_path +
                              " (the volume's device is " + device->node + ")");
  }
  if (!MountBelongsTo(*entry, *device, false, staging_path)) {
    return FailedPrecondition("the staging path " + staging_path + " holds " + Describe(*entry) +
                              ", not the volume's device " + device->node + " (serial " + serial +
                              ", device " + device->Number() + ")");
  }
  return device;
}

StatusOr<BlockDevice> HostOs::PublishVolume(const std::string& serial, bool block,
                                            const std::string& staging_path,
                                            const std::string& target, bool readonly,
                                            const MountOptions& options) {
  StatusOr<BlockDevice> device = VerifyStaged(serial, block, staging_path);
  if (!device.ok()) {
    return FailedPrecondition("volume not published: " + device.status().message() +
                              "; call NodeStageVolume again");
  }
  const std::string source = block ? device->node : staging_path;
  Status bound = PublishBind(*device, block, source, target, readonly, options);
  if (!bound.ok()) return bound;
  return device;
}

Status HostOs::UnmountVolumePath(const std::string& serial,
                                 const std::optional<BlockDevice>& recorded, bool block,
                                 const std::string& path, bool staging) {
  StatusOr<BlockDevice> found =
      serial.empty() ? StatusOr<BlockDevice>(NotFound("no serial"))
                     : VolumeDeviceOf(FindDeviceBySerial(sysfs_root_, serial), serial, limits_);
  const BlockDevice* device = found.ok() ? &*found : recorded ? &*recorded : nullptr;
  if (staging) {
    auto mounts = ReadMountInfo();
    if (!mounts.ok()) return mounts.status();
    std::vector<std::string> elsewhere;
    const BlockDevice* candidates[] = {found.ok() ? &*found : nullptr,
                                       recorded ? &*recorded : nullptr};
    for (const BlockDevice* candidate : candidates) {
      if (candidate == nullptr) continue;
      for (const std::string& point : MountsOfDevice(*mounts, *candidate, block)) {
        if (point != path &&
            std::find(elsewhere.begin(), elsewhere.end(), point) == elsewhere.end()) {
          elsewhere.push_back(point);
        }
      }
    }
    if (!elsewhere.empty()) {
      std::string list;
      for (size_t i = 0; i < elsewhere.size() && i < 5; ++i)
        list += (i == 0 ? "" : ", ") + elsewhere[i];
      return FailedPrecondition("the volume's device is still mounted at " + list +
                                "; unpublish it there before unstaging");
    }
  }
  Status unmounted = UnmountAndRemove(device, block, path, true);
  // A mount made when the disk had its recorded device number, which it has since lost (a
  // detach and attach while mounted): still our mount at our path.
  if (!unmounted.ok() && unmounted.code() == StatusCode::kFailedPrecondition && found.ok() &&
      recorded && recorded->Number() != found->Number()) {
    unmounted = UnmountAndRemove(&*recorded, block, path, true);
  }
  if (!unmounted.ok() || !staging || serial.empty()) return unmounted;
  // The volume's last use on this node has ended: an encrypted volume's mapping is closed.
  return CloseVolumeMapping(serial, limits_);
}

VolumeMeasurement HostOs::MeasureVolume(const std::string& serial, bool block,
                                        const std::string& path, bool expect_mount,
                                        bool expect_readonly) {
  VolumeMeasurement measured;
  StatusOr<BlockDevice> disk = FindDeviceBySerial(sysfs_root_, serial);
  if (!disk.ok()) {
    measured.problem = "the volume's disk has vanished from this node: " + disk.status().message();
    return measured;
  }
  StatusOr<BlockDevice> device = VolumeDeviceOf(disk, serial, limits_);
  if (!device.ok()) {
    measured.problem = device.status().message();
    return measured;
  }
  const bool present =
      IsMapping(*device) ? MappingStillPresent(*device) : DeviceStillPresent(sysfs_root_, *device);
  measured.problem = VolumeProblem(present, *device, block, path, expect_mount, expect_readonly);
  if (block) {
    StatusOr<int64_t> bytes = BlockDeviceBytes(device->node);
    if (bytes.ok()) measured.block_bytes = *bytes;
  } else if (measured.problem.empty() || measured.problem.find("read-only") != std::string::npos) {
    StatusOr<FilesystemUsage> usage = UsageOf(path);
    if (usage.ok()) measured.usage = *usage;
  }
  return measured;
}

}  // namespace oxide::node
