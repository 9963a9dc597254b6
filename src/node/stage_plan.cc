#include "node/stage_plan.h"

#include <filesystem>

#include "node/filesystem_history.h"
#include "node/filesystem_probe.h"
#include "node/formatter.h"
#include "node/volume_ops.h"
#include "node/volume_stats.h"

namespace oxide::node {
namespace {

// A device is formatted only at the size the controller published: a reused device node can
// still report an old size.
Status CheckSize(const BlockDevice& device, const StageInputs& inputs) {
  if (!inputs.expected_bytes) return Status::Ok();
  StatusOr<int64_t> bytes = BlockDeviceBytes(device.node);
  if (!bytes.ok()) return bytes.status();
  if (static_cast<uint64_t>(*bytes) == *inputs.expected_bytes) return Status::Ok();
  return FailedPrecondition(device.node + " is " + std::to_string(*bytes) +
                            " bytes but the volume's disk is " +
                            std::to_string(*inputs.expected_bytes) +
                            " bytes; refusing to format it (the device may still show an older "
                            "disk's size: retry once the node sees the attached disk)");
}

StagePlan Plan(StageAction action, std::string reason) {
  return StagePlan{.action = action, .reason = std::move(reason), .uuid = ""};
}

StatusOr<StagePlan> Format(const BlockDevice& device, const StageInputs& inputs, StageAction action,
                           std::string reason) {
  if (Status size = CheckSize(device, inputs); !size.ok()) return size;
  return StagePlan{.action = action,
                   .reason = std::move(reason),
                   .uuid = inputs.intent_uuid.empty() ? NewFilesystemUuid() : inputs.intent_uuid};
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

}  // namespace

StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const StageInputs& inputs,
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

Status CarryOutStaging(const BlockDevice& device, const StagePlan& plan, const StageInputs& inputs,
                       const CommandLimits& limits, const std::string& xfs_profile) {
  if (plan.action == StageAction::kAlreadyMounted) return Status::Ok();
  if (plan.action == StageAction::kFormat || plan.action == StageAction::kReformat) {
    Status made = MakeFilesystem(device.node, inputs.fs_type, plan.action == StageAction::kReformat,
                                 plan.uuid, limits, inputs.fs_options, xfs_profile);
    if (!made.ok()) return made;
  }
  if (Status checked = CheckFilesystem(device.node, inputs.fs_type, limits); !checked.ok()) {
    return checked;
  }
  if (Status dir = EnsureDirectory(inputs.staging_path); !dir.ok()) return dir;
  return MountFilesystem(device.node, inputs.staging_path, inputs.fs_type, inputs.options);
}

}  // namespace oxide::node
