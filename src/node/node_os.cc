#include "node/node_os.h"

#include <algorithm>

#include "node/encrypted_volume.h"
#include "node/volume_ops.h"
#include "util/log.h"

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

StatusOr<BlockDevice> HostOs::FindVolumeDevice(const std::string& serial, bool encrypted) {
  StatusOr<BlockDevice> disk = FindDeviceBySerial(sysfs_root_, serial);
  if (!disk.ok()) return disk;
  return VolumeDeviceOf(disk, serial, encrypted, limits_);
}

Status HostOs::StillTheDisk(const std::string& serial, const BlockDevice& device) {
  // A plan or a key derivation can wait a while: the disk with the serial must still be this
  // device before anything writes to it.
  StatusOr<BlockDevice> now = FindDeviceBySerial(sysfs_root_, serial);
  if (!now.ok() || now->Number() != device.Number()) {
    return Unavailable("the volume's disk (serial " + serial + ") is no longer " + device.node +
                       " (" + device.Number() + "); retry the stage");
  }
  return Status::Ok();
}

StatusOr<StagePlan> HostOs::PlanStaging(const BlockDevice& device, const StageInputs& inputs) {
  return node::PlanStaging(device, inputs, limits_);
}

StatusOr<BlockDevice> HostOs::CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                              const StageInputs& inputs) {
  // The plan was made on this device some time ago (a commit, maybe a wait for a format slot).
  if (Status same = StillTheDisk(inputs.serial, device); !same.ok()) return same;
  return node::CarryOutStaging(device, plan, inputs, limits_, xfs_profile_);
}

StatusOr<BlockDevice> HostOs::OpenEncryptedBlock(const BlockDevice& device,
                                                 const StageInputs& inputs) {
  if (Status same = StillTheDisk(inputs.serial, device); !same.ok()) return same;
  StatusOr<EncryptedDisk> disk =
      OpenEncryptedDisk(device, inputs.serial, inputs.passphrase, false, limits_);
  if (!disk.ok()) return disk.status();
  StatusOr<BlockDevice> mapping = Unavailable("not opened");
  if (disk->mapper) {
    mapping = *disk->mapper;
  } else {
    if (Status size = CheckDiskSize(device, inputs.expected_bytes); !size.ok()) return size;
    if (Status same = StillTheDisk(inputs.serial, device); !same.ok()) return same;
    mapping = EncryptBlankDisk(device, inputs.serial, inputs.passphrase, false, limits_);
  }
  if (!mapping.ok()) return mapping;
  // Opened through the device's name: it must still have been the volume's disk.
  StatusOr<BlockDevice> on_disk = FindVolumeDevice(inputs.serial, true);
  if (!on_disk.ok() || on_disk->Number() != mapping->Number()) {
    if (Status closed = node::CloseVolumeMapping(inputs.serial, limits_); !closed.ok()) {
      log::Warn("a mapping opened on a disk that changed could not be closed",
                {{"serial", inputs.serial}, {"error", closed.message()}});
    }
    return Unavailable("the volume's disk (serial " + inputs.serial +
                       ") changed while it was opened; retry the stage");
  }
  return mapping;
}

void HostOs::CloseUnusedMappings(const std::vector<std::string>& keep_serials) {
  node::CloseUnusedMappings(keep_serials, limits_);
}

Status HostOs::CloseVolumeMapping(const std::string& serial) {
  return node::CloseVolumeMapping(serial, limits_);
}

StatusOr<BlockDevice> HostOs::VerifyStaged(const std::string& serial, bool encrypted, bool block,
                                           const std::string& staging_path) {
  StatusOr<BlockDevice> device = FindVolumeDevice(serial, encrypted);
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

StatusOr<BlockDevice> HostOs::PublishVolume(const std::string& serial, bool encrypted, bool block,
                                            const std::string& staging_path,
                                            const std::string& target, bool readonly,
                                            const MountOptions& options) {
  StatusOr<BlockDevice> device = VerifyStaged(serial, encrypted, block, staging_path);
  if (!device.ok()) {
    return FailedPrecondition("volume not published: " + device.status().message() +
                              "; call NodeStageVolume again");
  }
  const std::string source = block ? device->node : staging_path;
  Status bound = PublishBind(*device, block, source, target, readonly, options);
  if (!bound.ok()) return bound;
  return device;
}

Status HostOs::UnmountVolumePath(const std::string& serial, bool encrypted,
                                 const std::optional<BlockDevice>& recorded_device, bool block,
                                 const std::string& path, bool staging) {
  // An encrypted volume's recorded mapping number may belong to another volume's mapping after a
  // reboot: only the mapping found now is the volume's.
  const std::optional<BlockDevice> recorded =
      encrypted ? std::optional<BlockDevice>() : recorded_device;
  StatusOr<BlockDevice> found =
      serial.empty()
          ? StatusOr<BlockDevice>(NotFound("no serial"))
          : VolumeDeviceOf(FindDeviceBySerial(sysfs_root_, serial), serial, encrypted, limits_);
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
  if (!unmounted.ok() || !staging || !encrypted || serial.empty()) return unmounted;
  // The volume's last use on this node has ended: an encrypted volume's mapping is closed.
  return node::CloseVolumeMapping(serial, limits_);
}

VolumeMeasurement HostOs::MeasureVolume(const std::string& serial, bool encrypted, bool block,
                                        const std::string& path, bool expect_mount,
                                        bool expect_readonly) {
  VolumeMeasurement measured;
  StatusOr<BlockDevice> disk = FindDeviceBySerial(sysfs_root_, serial);
  if (!disk.ok()) {
    measured.problem = "the volume's disk has vanished from this node: " + disk.status().message();
    return measured;
  }
  StatusOr<BlockDevice> device = VolumeDeviceOf(disk, serial, encrypted, limits_);
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
