#include "fake_node_os.h"

#include <algorithm>

namespace engine_test {

using oxide::Status;
using oxide::StatusOr;
using oxide::node::BlockDevice;
using oxide::node::StageAction;
using oxide::node::StageInputs;
using oxide::node::StagePlan;
using oxide::node::VolumeMeasurement;

void FakeNodeOs::AddDevice(const std::string& serial, const std::string& name, unsigned minor) {
  std::lock_guard lock(mutex_);
  devices_[serial] =
      BlockDevice{.name = name, .node = "/dev/" + name, .major = 259, .minor = minor};
}

void FakeNodeOs::RemoveDevice(const std::string& serial) {
  std::lock_guard lock(mutex_);
  devices_.erase(serial);
}

void FakeNodeOs::MoveDevice(const std::string& serial, const std::string& new_name,
                            unsigned new_minor) {
  std::lock_guard lock(mutex_);
  devices_.at(serial) =
      BlockDevice{.name = new_name, .node = "/dev/" + new_name, .major = 259, .minor = new_minor};
}

void FakeNodeOs::UnmountBehindTheEngine(const std::string& path) {
  std::lock_guard lock(mutex_);
  mounts_.erase(path);
}

void FakeNodeOs::SetPlan(StagePlan plan) {
  std::lock_guard lock(mutex_);
  plan_ = std::move(plan);
}

void FakeNodeOs::SetIntentPlan(StagePlan plan) {
  std::lock_guard lock(mutex_);
  intent_plan_ = std::move(plan);
}

void FakeNodeOs::FailNext(Call call, Status status) {
  std::lock_guard lock(mutex_);
  failures_[call].push_back(std::move(status));
}

void FakeNodeOs::HoldNext(Call call) {
  std::lock_guard lock(mutex_);
  ++holds_[call];
}

void FakeNodeOs::Release() {
  std::lock_guard lock(mutex_);
  ++release_generation_;
  released_.notify_all();
}

bool FakeNodeOs::holding() {
  std::lock_guard lock(mutex_);
  return std::any_of(held_.begin(), held_.end(), [](const auto& held) { return held.second > 0; });
}

int FakeNodeOs::held(Call call) {
  std::lock_guard lock(mutex_);
  return held_[call];
}

int FakeNodeOs::count(Call call) {
  std::lock_guard lock(mutex_);
  return counts_[call];
}

int FakeNodeOs::max_in_flight(Call call) {
  std::lock_guard lock(mutex_);
  return max_in_flight_[call];
}

std::vector<FakeNodeOs::CarriedOut> FakeNodeOs::carried_out() {
  std::lock_guard lock(mutex_);
  return carried_out_;
}

std::vector<std::string> FakeNodeOs::format_calls() {
  std::lock_guard lock(mutex_);
  std::vector<std::string> calls;
  for (const CarriedOut& call : carried_out_)
    calls.push_back(call.what);
  return calls;
}

std::vector<FakeNodeOs::Bind> FakeNodeOs::binds() {
  std::lock_guard lock(mutex_);
  return binds_;
}

std::optional<StageInputs> FakeNodeOs::last_inputs() {
  std::lock_guard lock(mutex_);
  return last_inputs_;
}

int FakeNodeOs::measurements_of(const std::string& path) {
  std::lock_guard lock(mutex_);
  return measurements_[path];
}

bool FakeNodeOs::mounted(const std::string& path) {
  std::lock_guard lock(mutex_);
  return mounts_.count(path) != 0;
}

Status FakeNodeOs::Enter(Call call, std::unique_lock<std::mutex>& lock) {
  ++counts_[call];
  max_in_flight_[call] = std::max(max_in_flight_[call], ++in_flight_[call]);
  if (holds_[call] > 0) {
    --holds_[call];
    ++held_[call];
    const uint64_t generation = release_generation_;
    wake_();
    released_.wait(lock, [&] { return release_generation_ != generation; });
    --held_[call];
  }
  std::deque<Status>& failures = failures_[call];
  if (failures.empty()) return Status::Ok();
  Status failure = failures.front();
  failures.pop_front();
  return failure;
}

void FakeNodeOs::Leave(Call call) {
  --in_flight_[call];
}

const BlockDevice* FakeNodeOs::DeviceNamed(const std::string& name) {
  for (const auto& [serial, device] : devices_) {
    if (device.name == name) return &device;
  }
  return nullptr;
}

StatusOr<BlockDevice> FakeNodeOs::StagedLocked(const std::string& serial, bool block,
                                               const std::string& staging_path) {
  auto found = devices_.find(serial);
  if (found == devices_.end()) return oxide::NotFound("no block device with serial " + serial);
  if (block) return found->second;
  auto mount = mounts_.find(staging_path);
  if (mount == mounts_.end()) {
    return oxide::FailedPrecondition("nothing is mounted at the staging path " + staging_path +
                                     " (the volume's device is " + found->second.node + ")");
  }
  if (mount->second != found->second.name) {
    return oxide::FailedPrecondition("the staging path " + staging_path + " holds /dev/" +
                                     mount->second + ", not the volume's device " +
                                     found->second.node);
  }
  return found->second;
}

StatusOr<BlockDevice> FakeNodeOs::FindDevice(const std::string& serial) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kFindDevice, lock);
  Leave(Call::kFindDevice);
  if (!entered.ok()) return entered;
  auto found = devices_.find(serial);
  if (found == devices_.end()) return oxide::NotFound("no block device with serial " + serial);
  return found->second;
}

StatusOr<StagePlan> FakeNodeOs::PlanStaging(const BlockDevice& device, const StageInputs& inputs) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kPlanStaging, lock);
  Leave(Call::kPlanStaging);
  last_inputs_ = inputs;
  if (!entered.ok()) return entered;
  auto mount = mounts_.find(inputs.staging_path);
  if (mount != mounts_.end() && mount->second == device.name) {
    return StagePlan{.action = StageAction::kAlreadyMounted,
                     .reason = "the staging path holds a mount of the device",
                     .uuid = "",
                     .encrypt = false,
                     .volume_device = std::nullopt};
  }
  if (!inputs.intent_uuid.empty()) {
    if (intent_plan_) return *intent_plan_;
    return StagePlan{.action = StageAction::kReformat,
                     .reason = "our interrupted mkfs",
                     .uuid = inputs.intent_uuid,
                     .encrypt = false,
                     .volume_device = std::nullopt};
  }
  for (const auto& [serial, known] : devices_) {
    if (known.name == device.name && filesystems_.count(serial) != 0) {
      return StagePlan{.action = StageAction::kMount,
                       .reason = "the device holds a filesystem",
                       .uuid = "",
                       .encrypt = false,
                       .volume_device = std::nullopt};
    }
  }
  return plan_;
}

StatusOr<BlockDevice> FakeNodeOs::FindVolumeDevice(const std::string& serial, bool) {
  return FindDevice(serial);
}

StatusOr<BlockDevice> FakeNodeOs::OpenEncryptedBlock(const BlockDevice&, const StageInputs&) {
  return oxide::Unimplemented("the engine's NodeOs double has no encrypted volumes");
}

StatusOr<BlockDevice> FakeNodeOs::CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                                  const StageInputs& inputs) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kCarryOutStaging, lock);
  Leave(Call::kCarryOutStaging);
  last_inputs_ = inputs;
  const char* what = plan.action == StageAction::kFormat     ? "format"
                     : plan.action == StageAction::kReformat ? "reformat"
                                                             : "mount";
  carried_out_.push_back({.what = what, .device = device.name, .uuid = plan.uuid});
  if (!entered.ok()) return entered;
  if (DeviceNamed(device.name) == nullptr) {
    return oxide::FailedPrecondition("device " + device.node + " vanished");
  }
  if (plan.action == StageAction::kFormat || plan.action == StageAction::kReformat) {
    for (const auto& [serial, known] : devices_) {
      if (known.name == device.name) filesystems_.insert(serial);  // it holds a filesystem now
    }
  }
  mounts_[inputs.staging_path] = device.name;
  return device;
}

StatusOr<BlockDevice> FakeNodeOs::VerifyStaged(const std::string& serial, bool, bool block,
                                               const std::string& staging_path) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kVerifyStaged, lock);
  Leave(Call::kVerifyStaged);
  if (!entered.ok()) return entered;
  return StagedLocked(serial, block, staging_path);
}

StatusOr<BlockDevice> FakeNodeOs::PublishVolume(const std::string& serial, bool, bool block,
                                                const std::string& staging_path,
                                                const std::string& target, bool,
                                                const oxide::node::MountOptions&) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kPublishVolume, lock);
  Leave(Call::kPublishVolume);
  if (!entered.ok()) return entered;
  StatusOr<BlockDevice> device = StagedLocked(serial, block, staging_path);
  if (!device.ok()) {
    return oxide::FailedPrecondition("volume not published: " + device.status().message() +
                                     "; call NodeStageVolume again");
  }
  mounts_[target] = device->name;
  binds_.push_back({.target = target, .device = device->name});
  return device;
}

Status FakeNodeOs::UnmountVolumePath(const std::string& serial, bool,
                                     const std::optional<BlockDevice>& recorded, bool,
                                     const std::string& path, bool) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kUnmountVolumePath, lock);
  Leave(Call::kUnmountVolumePath);
  if (!entered.ok()) return entered;
  auto mount = mounts_.find(path);
  if (mount == mounts_.end()) return Status::Ok();
  // As the host: only a mount of the device with the serial, or of the recorded one, is ours.
  auto found = devices_.find(serial);
  const bool ours = (found != devices_.end() && found->second.name == mount->second) ||
                    (recorded && recorded->name == mount->second);
  if (!ours) {
    return oxide::FailedPrecondition("the mount at " + path + " (" + mount->second +
                                     ") does not belong to this volume; refusing to unmount it");
  }
  mounts_.erase(mount);
  return Status::Ok();
}

VolumeMeasurement FakeNodeOs::MeasureVolume(const std::string& serial, bool, bool block,
                                            const std::string& path, bool expect_mount, bool) {
  std::unique_lock lock(mutex_);
  const int ordinal = ++measured_;
  ++measurements_[path];
  Status entered = Enter(Call::kMeasureVolume, lock);
  Leave(Call::kMeasureVolume);
  VolumeMeasurement measured;
  if (!entered.ok()) {
    measured.problem = entered.message();
    return measured;
  }
  auto found = devices_.find(serial);
  if (found == devices_.end()) {
    measured.problem =
        "the volume's disk is not visible on this node: no block device with "
        "serial " +
        serial;
    return measured;
  }
  auto mount = mounts_.find(path);
  if (expect_mount && (mount == mounts_.end() || mount->second != found->second.name)) {
    measured.problem = path + " is not mounted";
  }
  if (block) {
    measured.block_bytes = int64_t{1} << 30;
  } else if (measured.problem.empty()) {
    measured.usage = oxide::node::FilesystemUsage{
        .bytes_total = int64_t{1} << 30,
        .bytes_used = int64_t{ordinal} << 20,
        .bytes_available = (int64_t{1} << 30) - (int64_t{ordinal} << 20),
        .inodes_total = 65536,
        .inodes_used = 11,
        .inodes_available = 65525};
  }
  return measured;
}

}  // namespace engine_test
