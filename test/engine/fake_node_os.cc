#include "fake_node_os.h"

namespace engine_test {

using oxide::Status;
using oxide::StatusOr;
using oxide::node::BlockDevice;
using oxide::node::StagePlan;

void FakeNodeOs::AddDevice(const std::string& serial, const std::string& name, unsigned minor) {
  std::lock_guard lock(mutex_);
  devices_[serial] =
      BlockDevice{.name = name, .node = "/dev/" + name, .major = 259, .minor = minor};
}

void FakeNodeOs::RemoveDevice(const std::string& serial) {
  std::lock_guard lock(mutex_);
  devices_.erase(serial);
}

void FakeNodeOs::SetPlan(StagePlan plan) {
  std::lock_guard lock(mutex_);
  plan_ = plan;
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
  released_flag_ = true;
  released_.notify_all();
}

bool FakeNodeOs::holding() {
  std::lock_guard lock(mutex_);
  return held_;
}

int FakeNodeOs::count(Call call) {
  std::lock_guard lock(mutex_);
  return counts_[call];
}

std::vector<std::string> FakeNodeOs::format_calls() {
  std::lock_guard lock(mutex_);
  return format_calls_;
}

bool FakeNodeOs::mounted(const std::string& path) {
  std::lock_guard lock(mutex_);
  return mounts_.count(path) != 0;
}

Status FakeNodeOs::Enter(Call call, std::unique_lock<std::mutex>& lock) {
  ++counts_[call];
  if (holds_[call] > 0) {
    --holds_[call];
    held_ = true;
    released_flag_ = false;
    wake_();
    released_.wait(lock, [this] { return released_flag_; });
    held_ = false;
  }
  std::deque<Status>& failures = failures_[call];
  if (failures.empty()) return Status::Ok();
  Status failure = failures.front();
  failures.pop_front();
  return failure;
}

StatusOr<BlockDevice> FakeNodeOs::FindDevice(const std::string& serial) {
  std::unique_lock lock(mutex_);
  if (Status failed = Enter(Call::kFindDevice, lock); !failed.ok()) return failed;
  auto found = devices_.find(serial);
  if (found == devices_.end()) return oxide::NotFound("no block device with serial " + serial);
  return found->second;
}

StatusOr<StagePlan> FakeNodeOs::PlanStaging(const BlockDevice& device, const std::string& path,
                                            const std::string&, bool format_intent) {
  std::unique_lock lock(mutex_);
  if (Status failed = Enter(Call::kPlanStaging, lock); !failed.ok()) return failed;
  auto mount = mounts_.find(path);
  if (mount != mounts_.end() && mount->second == device.name) return StagePlan::kMounted;
  return format_intent ? StagePlan::kFormat : plan_;
}

Status FakeNodeOs::FormatAndMount(const BlockDevice& device, const std::string& path,
                                  const std::string&, const oxide::node::MountOptions&, bool format,
                                  bool) {
  std::unique_lock lock(mutex_);
  Status entered = Enter(Call::kFormatAndMount, lock);
  format_calls_.push_back(format ? "format" : "mount");
  if (!entered.ok()) return entered;
  bool present = false;
  for (const auto& [serial, known] : devices_)
    present |= known.name == device.name;
  if (!present) return oxide::FailedPrecondition("device " + device.node + " vanished");
  mounts_[path] = device.name;
  if (format) plan_ = StagePlan::kMount;  // it holds a filesystem now
  return Status::Ok();
}

Status FakeNodeOs::PublishBind(const BlockDevice& device, bool, const std::string&,
                               const std::string& target, bool, const oxide::node::MountOptions&) {
  std::unique_lock lock(mutex_);
  if (Status failed = Enter(Call::kPublishBind, lock); !failed.ok()) return failed;
  mounts_[target] = device.name;
  return Status::Ok();
}

Status FakeNodeOs::UnmountAndRemove(const BlockDevice*, bool, const std::string& path, bool) {
  std::unique_lock lock(mutex_);
  if (Status failed = Enter(Call::kUnmountAndRemove, lock); !failed.ok()) return failed;
  mounts_.erase(path);
  return Status::Ok();
}

std::string FakeNodeOs::VolumeProblem(const BlockDevice&, bool, const std::string& path,
                                      bool expect_mount, bool) {
  std::lock_guard lock(mutex_);
  if (expect_mount && mounts_.count(path) == 0) return path + " is not mounted";
  return "";
}

StatusOr<oxide::node::FilesystemUsage> FakeNodeOs::UsageOf(const std::string&) {
  return oxide::node::FilesystemUsage{.bytes_total = 1 << 30,
                                      .bytes_used = 1 << 20,
                                      .bytes_available = (1 << 30) - (1 << 20),
                                      .inodes_total = 65536,
                                      .inodes_used = 11,
                                      .inodes_available = 65525};
}

StatusOr<int64_t> FakeNodeOs::BlockDeviceBytes(const std::string&) {
  return int64_t{1} << 30;
}

}  // namespace engine_test
