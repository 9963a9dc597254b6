#include "node/stage_plan.h"

#include <filesystem>

#include "node/encrypted_volume.h"
#include "node/filesystem_history.h"
#include "node/filesystem_probe.h"
#include "node/formatter.h"
#include "node/volume_ops.h"
#include "node/volume_stats.h"

namespace oxide::node {
namespace {

StagePlan Plan(StageAction action, std::string reason) {
  return StagePlan{.action = action,
                   .reason = std::move(reason),
                   .uuid = "",
                   .encrypt = false,
                   .volume_device = std::nullopt};
}

StatusOr<StagePlan> Format(const BlockDevice& device, const StageInputs& inputs, StageAction action,
                           std::string reason) {
  if (Status size = CheckDiskSize(device, inputs.expected_bytes); !size.ok()) return size;
  return StagePlan{.action = action,
                   .reason = std::move(reason),
                   .uuid = inputs.intent_uuid.empty() ? NewFilesystemUuid() : inputs.intent_uuid,
                   .encrypt = false,
                   .volume_device = std::nullopt};
}

// Under a format intent, a `fs_type` filesystem carrying the intent's UUID: our mkfs wrote it.
// Formatted again only while mkfs's own "in progress" mark is set and nothing mounted it since;
// a finished mkfs's filesystem is mounted as it is, whatever a checker would say of it (a
// filesystem used elsewhere and not cleanly unmounted can look broken: it is never formatted).
StatusOr<StagePlan> PlanOurFilesystem(const BlockDevice& device, const StageInputs& inputs,
                                      const CommandLimits& limits) {
  StatusOr<FilesystemHistory> history = ReadFilesystemHistory(device.node, inputs.fs_type, limits);
  if (!history.ok()) return history.status();
  if (history->mounted_since_mkfs) {
    return Plan(StageAction::kMount, "our format's filesystem has been mounted since (" +
                                         history->evidence + "): never formatted again");
  }
  if (!history->mkfs_unfinished) {
    return Plan(StageAction::kMount,
                "our interrupted format had completed (mkfs had finished the filesystem): "
                "mounted, not formatted again");
  }
  return Format(device, inputs, StageAction::kReformat,
                "our interrupted mkfs had not finished the filesystem (its in-progress mark is "
                "set) and nothing mounted it");
}

Status EnsureDirectory(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return Internal("cannot create directory " + path + ": " + ec.message());
  if (!std::filesystem::is_directory(path, ec))
    return FailedPrecondition(path + " exists and is not a directory");
  return Status::Ok();
}

StatusOr<StagePlan> PlanOnDevice(const BlockDevice& device, const StageInputs& inputs,
                                 const CommandLimits& limits);

// The disk of an encrypted volume: a blank one is to be encrypted and formatted; one with a LUKS
// header is opened, and its mapping planned like a plain disk (it may hold our filesystem, or,
// after a crash between luksFormat and mkfs, only what decrypting zeros gives under our intent).
StatusOr<StagePlan> PlanEncrypted(const BlockDevice& disk, const StageInputs& inputs,
                                  const CommandLimits& limits) {
  const bool intent = !inputs.intent_uuid.empty();
  StatusOr<EncryptedDisk> encrypted =
      OpenEncryptedDisk(disk, inputs.serial, inputs.passphrase, intent, limits);
  if (!encrypted.ok()) return encrypted.status();
  if (encrypted->blank) {
    StatusOr<StagePlan> plan =
        Format(disk, inputs, intent ? StageAction::kReformat : StageAction::kFormat,
               encrypted->reason + ": encrypted, then formatted");
    if (plan.ok()) plan->encrypt = true;
    return plan;
  }
  StageInputs on_mapping = inputs;
  on_mapping.encrypted = false;
  on_mapping.expected_bytes.reset();  // the mapping is the disk less its LUKS header
  StatusOr<StagePlan> plan = PlanOnDevice(*encrypted->mapper, on_mapping, limits);
  if (!plan.ok()) return plan;
  plan->reason = "encrypted (" + encrypted->reason + "); " + plan->reason;
  plan->volume_device = *encrypted->mapper;
  return plan;
}

StatusOr<StagePlan> PlanOnDevice(const BlockDevice& device, const StageInputs& inputs,
                                 const CommandLimits& limits) {
  auto mounts = ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  if (auto entry = FindMount(*mounts, inputs.staging_path)) {
    if (MountBelongsTo(*entry, device, false, inputs.staging_path)) {
      return Plan(StageAction::kAlreadyMounted, "already mounted at the staging path");
    }
    return FailedPrecondition("something else (" + entry->source + ", " + entry->fs_type +
                              ") is already mounted at " + inputs.staging_path +
                              "; refusing to mount over it");
  }
  StatusOr<DeviceContent> content = ProbeDevice(device.node, limits);
  if (!content.ok()) return content.status();
  const bool intent = !inputs.intent_uuid.empty();
  switch (content->kind) {
    case DeviceContent::Kind::kBlank:
      return Format(device, inputs, StageAction::kFormat, "the device is blank");
    case DeviceContent::Kind::kFilesystem:
      if (content->fs_type != inputs.fs_type) {
        return FailedPrecondition(device.node + " already holds a " + content->fs_type +
                                  " filesystem but the volume capability asks for " +
                                  inputs.fs_type + "; it is never reformatted");
      }
      if (!intent) return Plan(StageAction::kMount, "the device holds a filesystem");
      if (content->uuid != inputs.intent_uuid) {
        return Plan(StageAction::kMount, "the filesystem's UUID " + content->uuid +
                                             " is not our format's (" + inputs.intent_uuid +
                                             "): someone else made it; never formatted");
      }
      return PlanOurFilesystem(device, inputs, limits);
    case DeviceContent::Kind::kUnknownData:
      // No signature yet: only our mkfs wrote here since the device was verified blank.
      if (intent) {
        return Format(device, inputs, StageAction::kReformat,
                      "our interrupted format left data without a filesystem signature");
      }
      break;
    case DeviceContent::Kind::kOtherSignature:
    case DeviceContent::Kind::kPartitionTable:
      break;
  }
  return FailedPrecondition(device.node + " holds data (" + content->detail +
                            "); refusing to format it");
}

}  // namespace

Status CheckDiskSize(const BlockDevice& device, std::optional<uint64_t> expected_bytes) {
  if (!expected_bytes) return Status::Ok();
  StatusOr<int64_t> bytes = BlockDeviceBytes(device.node);
  if (!bytes.ok()) return bytes.status();
  if (static_cast<uint64_t>(*bytes) == *expected_bytes) return Status::Ok();
  return FailedPrecondition(device.node + " is " + std::to_string(*bytes) +
                            " bytes but the volume's disk is " + std::to_string(*expected_bytes) +
                            " bytes; refusing to format it (the device may still show an older "
                            "disk's size: retry once the node sees the attached disk)");
}

StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const StageInputs& inputs,
                                const CommandLimits& limits) {
  if (inputs.encrypted) return PlanEncrypted(device, inputs, limits);
  return PlanOnDevice(device, inputs, limits);
}

StatusOr<BlockDevice> CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                      const StageInputs& inputs, const CommandLimits& limits,
                                      const std::string& xfs_profile) {
  BlockDevice target = plan.volume_device.value_or(device);
  if (plan.action == StageAction::kAlreadyMounted) return target;
  if (plan.encrypt) {
    StatusOr<BlockDevice> mapping = EncryptBlankDisk(device, inputs.serial, inputs.passphrase,
                                                     !inputs.intent_uuid.empty(), limits);
    if (!mapping.ok()) return mapping.status();
    target = *mapping;
  }
  if (plan.action == StageAction::kFormat || plan.action == StageAction::kReformat) {
    // A mapping just made holds what decrypting the blank disk gives: mkfs is told to go ahead.
    const bool force = plan.action == StageAction::kReformat || plan.encrypt;
    Status made = MakeFilesystem(target.node, inputs.fs_type, force, plan.uuid, limits,
                                 inputs.fs_options, xfs_profile);
    if (!made.ok()) return made;
  }
  if (Status checked = CheckFilesystem(target.node, inputs.fs_type, limits); !checked.ok()) {
    return checked;
  }
  if (Status dir = EnsureDirectory(inputs.staging_path); !dir.ok()) return dir;
  Status mounted =
      MountFilesystem(target.node, inputs.staging_path, inputs.fs_type, inputs.options);
  if (!mounted.ok()) return mounted;
  return target;
}

}  // namespace oxide::node
