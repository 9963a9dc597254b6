// A NodeOs double for the node volume engine's tests: devices that appear and vanish when the
// test says, calls that fail with the Status the test scripts (EBUSY, ENOSPC, mkfs failure, a
// device gone mid-stage), and calls held on their worker thread until the test releases them (a
// mount that lands late), so that other calls can be made while one is in flight. It touches no
// real device and needs no root. Worker threads call the NodeOs methods; the test thread calls
// the rest. Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "node/node_os.h"

namespace engine_test {

class FakeNodeOs final : public oxide::node::NodeOs {
 public:
  enum class Call { kFindDevice, kPlanStaging, kFormatAndMount, kPublishBind, kUnmountAndRemove };

  // `wake` runs on the worker thread whenever a call is held or finishes (the test wakes its
  // loop with it).
  explicit FakeNodeOs(std::function<void()> wake) : wake_(std::move(wake)) {}

  void AddDevice(const std::string& serial, const std::string& name, unsigned minor);
  void RemoveDevice(const std::string& serial);
  // What PlanStaging answers for a device not mounted yet (kFormat: blank).
  void SetPlan(oxide::node::StagePlan plan);
  // The next `call` answers `status` instead of doing its work.
  void FailNext(Call call, oxide::Status status);
  // The next `call` waits on its worker thread until Release().
  void HoldNext(Call call);
  void Release();
  bool holding();

  int count(Call call);
  // What each FormatAndMount call was asked to do, in order: "format" or "mount".
  std::vector<std::string> format_calls();
  bool mounted(const std::string& path);

  oxide::StatusOr<oxide::node::BlockDevice> FindDevice(const std::string& serial) override;
  oxide::StatusOr<oxide::node::StagePlan> PlanStaging(const oxide::node::BlockDevice& device,
                                                      const std::string& path,
                                                      const std::string& fs_type,
                                                      bool format_intent) override;
  oxide::Status FormatAndMount(const oxide::node::BlockDevice& device, const std::string& path,
                               const std::string& fs_type, const oxide::node::MountOptions& options,
                               bool format, bool redo) override;
  oxide::Status PublishBind(const oxide::node::BlockDevice& device, bool block,
                            const std::string& source, const std::string& target, bool readonly,
                            const oxide::node::MountOptions& options) override;
  oxide::Status UnmountAndRemove(const oxide::node::BlockDevice* device, bool block,
                                 const std::string& path, bool remove) override;
  std::string VolumeProblem(const oxide::node::BlockDevice& device, bool block,
                            const std::string& path, bool expect_mount,
                            bool expect_readonly) override;
  oxide::StatusOr<oxide::node::FilesystemUsage> UsageOf(const std::string& path) override;
  oxide::StatusOr<int64_t> BlockDeviceBytes(const std::string& device_node) override;

 private:
  // Counts the call, waits while it is held, and returns the scripted failure if any.
  oxide::Status Enter(Call call, std::unique_lock<std::mutex>& lock);

  std::function<void()> wake_;
  std::mutex mutex_;
  std::condition_variable released_;
  std::map<std::string, oxide::node::BlockDevice> devices_;  // by serial
  std::map<std::string, std::string> mounts_;                // path -> device name
  oxide::node::StagePlan plan_ = oxide::node::StagePlan::kFormat;
  std::map<Call, std::deque<oxide::Status>> failures_;
  std::map<Call, int> holds_, counts_;
  bool held_ = false, released_flag_ = false;
  std::vector<std::string> format_calls_;
};

}  // namespace engine_test
