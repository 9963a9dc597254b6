// Async CSI client driving volumes through Create → Publish → Unpublish → Delete, retrying like the
// sidecars (deadline, jittered backoff). Run() on one thread; in_flight()/done_count() any thread;
// DriverOptions::on_answer tells another thread (e.g. a crash test's) of every call answered OK.
#pragma once

#include <grpcpp/channel.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace oxide::testing {

enum class VolumeStep { kCreate = 0, kPublish = 1, kUnpublish = 2, kDelete = 3, kDone = 4 };
inline constexpr int kVolumeSteps = 4;
const char* VolumeStepName(VolumeStep step);

struct VolumePlan {
  std::string name;                       // the CSI volume name
  std::string node_id;                    // instance to publish to (unused when last is kCreate)
  VolumeStep last = VolumeStep::kDelete;  // the last step to run
  bool publish = true;                    // false: Create, then straight to Delete
};

// A call the plugin answered OK, as the client saw it.
struct AnsweredCall {
  size_t plan = 0;                        // index of the volume's plan
  std::string name;                       // the CSI volume name
  VolumeStep step = VolumeStep::kCreate;  // which call
  std::string volume_id;                  // the volume's id (that CreateVolume answered)
  std::string node_id;                    // of a publish or unpublish; empty otherwise
};

struct DriverOptions {
  std::chrono::milliseconds deadline{2000};  // of each call
  std::chrono::milliseconds backoff_first{100};
  std::chrono::milliseconds backoff_max{2000};
  size_t concurrency = 0;  // volumes in progress at once; 0 = all of them
  uint64_t seed = 1;       // of the backoff jitter
  uint64_t size_bytes = uint64_t{1} << 30;
  // Called on the Run() thread for every call answered OK, as soon as the answer is taken and
  // before the volume's next call is sent (so a call the plugin saw implies its predecessor's
  // record). It must be quick; it may take a lock shared with another thread.
  std::function<void(const AnsweredCall&)> on_answer = nullptr;
};

struct StepStats {
  std::vector<double> ok_latency_ms;  // of the attempts that succeeded
  uint64_t attempts = 0;
  std::map<std::string, uint64_t> errors;       // by gRPC code name
  std::map<std::string, std::string> examples;  // the first message seen for each code
};

struct VolumeResult {
  std::string volume_id;                     // from CreateVolume
  VolumeStep reached = VolumeStep::kCreate;  // kDone when the plan was completed
  std::string last_error;
};

class VolumeDriver {
 public:
  VolumeDriver(std::shared_ptr<grpc::Channel> channel, std::vector<VolumePlan> plans,
               DriverOptions options);
  ~VolumeDriver();
  VolumeDriver(const VolumeDriver&) = delete;
  VolumeDriver& operator=(const VolumeDriver&) = delete;

  // Runs (once) until every plan is complete (true) or `limit` has passed (false; outstanding calls
  // are cancelled and drained first).
  bool Run(std::chrono::milliseconds limit);

  size_t in_flight() const { return in_flight_.load(); }
  size_t max_in_flight() const { return max_in_flight_; }
  size_t done_count() const { return done_.load(); }
  const std::vector<VolumeResult>& results() const { return results_; }
  const StepStats& stats(VolumeStep step) const { return stats_[static_cast<int>(step)]; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<VolumeResult> results_;
  StepStats stats_[kVolumeSteps];
  std::atomic<size_t> in_flight_{0};
  std::atomic<size_t> done_{0};
  size_t max_in_flight_ = 0;
};

// A channel to a unix socket that retries connecting quickly (every 100 ms .. 1 s) after the
// server went away.
std::shared_ptr<grpc::Channel> ReconnectingUnixChannel(const std::string& socket_path);

// q-quantile (0..1) of `values` (sorted in place); 0 when empty.
double Quantile(std::vector<double>& values, double q);

}  // namespace oxide::testing
