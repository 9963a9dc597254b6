// A NodeOs double for the node volume engine's tests: devices that appear, vanish and change
// their name and number (a reboot) when the test says, a mount table the test can change behind
// the engine's back, calls that fail with the Status the test scripts (EBUSY, ENOSPC, mkfs
// failure, a device gone mid-stage), and calls held on their worker thread until the test
// releases them (a mount that lands late, a slow mkfs), so that other calls can be made while one
// is in flight. Like HostOs it finds a volume's device by serial on every call. It touches no real
// device and needs no root. Worker threads call the NodeOs methods; the test thread calls the
// rest. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "node/node_os.h"

namespace engine_test {

class FakeNodeOs final : public oxide::node::NodeOs {
 public:
  enum class Call {
    kFindDevice,
    kPlanStaging,
    kCarryOutStaging,
    kVerifyStaged,
    kPublishVolume,
    kUnmountVolumePath,
    kMeasureVolume,
  };

  // What one CarryOutStaging call was asked to do.
  struct CarriedOut {
    std::string what;    // "format", "reformat" or "mount"
    std::string device;  // the device's name
    std::string uuid;    // the plan's UUID (format and reformat)
  };
  // What one PublishVolume call bound.
  struct Bind {
    std::string target;
    std::string device;  // the device's name
  };

  // The UUID of the default plan for a blank device.
  static constexpr const char* kPlanUuid = "0b5e7c1a-2f0d-4c3e-9a61-5d2f8e4b7c90";

  // `wake` runs on the worker thread whenever a call is held (the test wakes its loop with it).
  explicit FakeNodeOs(std::function<void()> wake) : wake_(std::move(wake)) {}

  void AddDevice(const std::string& serial, const std::string& name, unsigned minor);
  void RemoveDevice(const std::string& serial);
  // The disk with `serial` gets another device name and number (a reboot enumerates disks anew).
  // The mount table is left as it is.
  void MoveDevice(const std::string& serial, const std::string& new_name, unsigned new_minor);
  // The mount at `path` is gone without the engine having unmounted it (a reboot, an admin).
  void UnmountBehindTheEngine(const std::string& path);
  // What PlanStaging answers, without a format intent, for a device that is not mounted at the
  // staging path and holds no filesystem made by CarryOutStaging (default: kFormat, kPlanUuid).
  void SetPlan(oxide::node::StagePlan plan);
  // What PlanStaging answers, with a format intent, for a device that is not mounted at the
  // staging path (default: kReformat with the intent's UUID).
  void SetIntentPlan(oxide::node::StagePlan plan);
  // The next `call` answers `status` instead of doing its work (MeasureVolume: as its problem).
  void FailNext(Call call, oxide::Status status);
  // The next `call` waits on its worker thread until Release().
  void HoldNext(Call call);
  // Lets every call held now go on (calls held later wait for the next Release()).
  void Release();
  bool holding();
  // How many `call`s are held now.
  int held(Call call);

  int count(Call call);
  // The most `call`s that were ever in flight (entered and not yet past their hold) at once.
  int max_in_flight(Call call);
  std::vector<CarriedOut> carried_out();
  // What each CarryOutStaging call was asked to do, in order: "format", "reformat" or "mount".
  std::vector<std::string> format_calls();
  std::vector<Bind> binds();
  // The inputs of the last PlanStaging or CarryOutStaging call.
  std::optional<oxide::node::StageInputs> last_inputs();
  // How many MeasureVolume calls measured `path`.
  int measurements_of(const std::string& path);
  bool mounted(const std::string& path);

  oxide::StatusOr<oxide::node::BlockDevice> FindDevice(const std::string& serial) override;
  oxide::StatusOr<oxide::node::StagePlan> PlanStaging(
      const oxide::node::BlockDevice& device, const oxide::node::StageInputs& inputs) override;
  // The disk found by serial: the double has no encrypted volumes.
  oxide::StatusOr<oxide::node::BlockDevice> FindVolumeDevice(const std::string& serial,
                                                             bool) override;
  oxide::StatusOr<oxide::node::BlockDevice> CarryOutStaging(
      const oxide::node::BlockDevice& device, const oxide::node::StagePlan& plan,
      const oxide::node::StageInputs& inputs) override;
  // Encryption is tested on real loop devices (test/node): UNIMPLEMENTED here.
  oxide::StatusOr<oxide::node::BlockDevice> OpenEncryptedBlock(
      const oxide::node::BlockDevice& device, const oxide::node::StageInputs& inputs) override;
  void CloseUnusedMappings(const std::vector<std::string>&) override {}
  oxide::Status CloseVolumeMapping(const std::string&) override { return oxide::Status::Ok(); }
  oxide::StatusOr<oxide::node::BlockDevice> VerifyStaged(const std::string& serial, bool,
                                                         bool block,
                                                         const std::string& staging_path) override;
  oxide::StatusOr<oxide::node::BlockDevice> PublishVolume(
      const std::string& serial, bool, bool block, const std::string& staging_path,
      const std::string& target, bool readonly, const oxide::node::MountOptions& options) override;
  oxide::Status UnmountVolumePath(const std::string& serial, bool,
                                  const std::optional<oxide::node::BlockDevice>& recorded,
                                  bool block, const std::string& path, bool staging) override;
  // Healthy when the device with `serial` is there and (when `expect_mount`) mounted at `path`.
  // The usage's bytes_used is n MiB for the n-th measurement, so that a test can tell which
  // measurement an answer came from; inodes_used is 11.
  oxide::node::VolumeMeasurement MeasureVolume(const std::string& serial, bool, bool block,
                                               const std::string& path, bool expect_mount,
                                               bool expect_readonly) override;

 private:
  // Counts the call as in flight, waits while it is held, and returns the scripted failure if
  // any. Every call that entered must Leave().
  oxide::Status Enter(Call call, std::unique_lock<std::mutex>& lock);
  void Leave(Call call);
  // The device with `serial` now, and the mount check of VerifyStaged. Called locked.
  oxide::StatusOr<oxide::node::BlockDevice> StagedLocked(const std::string& serial, bool block,
                                                         const std::string& staging_path);
  const oxide::node::BlockDevice* DeviceNamed(const std::string& name);

  std::function<void()> wake_;
  std::mutex mutex_;
  std::condition_variable released_;
  std::map<std::string, oxide::node::BlockDevice> devices_;  // by serial
  std::set<std::string> filesystems_;                        // serials of formatted disks
  std::map<std::string, std::string> mounts_;                // path -> device name
  oxide::node::StagePlan plan_{.action = oxide::node::StageAction::kFormat,
                               .reason = "the device is blank",
                               .uuid = kPlanUuid,
                               .encrypt = false,
                               .volume_device = std::nullopt};
  std::optional<oxide::node::StagePlan> intent_plan_;
  std::map<Call, std::deque<oxide::Status>> failures_;
  std::map<Call, int> holds_, held_, counts_, in_flight_, max_in_flight_;
  uint64_t release_generation_ = 0;
  std::vector<CarriedOut> carried_out_;
  std::vector<Bind> binds_;
  std::optional<oxide::node::StageInputs> last_inputs_;
  std::map<std::string, int> measurements_;  // by path
  int measured_ = 0;
};

}  // namespace engine_test
