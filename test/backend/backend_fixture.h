// Test support for the Oxide client: a gtest fixture with a fresh oxide-sim process, a libuv
// loop run by the test thread (which is the client's loop thread), a ManualClock for every timer
// of the code under test (retries, polling, backoff), the client, and helpers to wait for
// callbacks and to read the simulator's request log. The clock moves only when the loop is idle
// (no HTTP request or worker-pool job outstanding): then it jumps to the next timer, so no test
// waits for a timer in wall time, and real answers always arrive before a timer that would
// follow them. gtest main thread only.
#pragma once

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/oxide_client.h"
#include "http_client.h"
#include "sim_process.h"
#include "support/manual_clock.h"

namespace backend_test {

using namespace oxide::backend;  // NOLINT(google-build-using-namespace): test code
using oxide::Status;
using oxide::StatusCode;
using oxide::StatusOr;

constexpr uint64_t kGiB = 1024ULL * 1024 * 1024;

class BackendTest : public ::testing::Test {
 public:
  virtual std::vector<std::string> sim_args() const { return {}; }

  void SetUp() override;
  void TearDown() override;

  // The default test configuration: project "demo", the sim's token, fast seeded retries.
  ClientConfig DefaultConfig() const;
  // Replaces the client (and its transports) with one built from `config`.
  void Rebuild(const ClientConfig& config);

  // Runs the loop until `finished()`, advancing the clock to the next timer whenever the loop is
  // idle. False when `limit` of wall time passes first (a guard against a hung test only).
  bool RunUntil(const std::function<bool()>& finished,
                std::chrono::milliseconds limit = std::chrono::seconds(30));
  // Runs the loop until `finished()` WITHOUT moving the clock: only real events (an HTTP answer,
  // a file-system notification, a worker-pool job) can get there. False when `limit` passes.
  bool RunWithoutTime(const std::function<bool()>& finished,
                      std::chrono::milliseconds limit = std::chrono::seconds(30));
  // Lets `span` of clock time pass: every timer due meanwhile runs in turn, each once the loop is
  // idle, and real events (HTTP answers) are waited for. Replaces "run the loop for a while".
  void Elapse(std::chrono::milliseconds span);
  // Something real is outstanding (an HTTP request, worker-pool work): the clock must not move.
  virtual bool Busy();

  template <typename T>
  StatusOr<T> Await(const std::function<void(Done<T>)>& call) {
    std::optional<StatusOr<T>> result;
    call([&](StatusOr<T> value) { result.emplace(std::move(value)); });
    if (!RunUntil([&] { return result.has_value(); }))
      return Status(StatusCode::kDeadlineExceeded, "test timed out waiting for a callback");
    return std::move(*result);
  }
  Status AwaitStatus(const std::function<void(DoneStatus)>& call);

  // Typed shortcuts that wait.
  StatusOr<Disk> CreateBlankDisk(const std::string& name, uint64_t gib = 1);
  StatusOr<Disk> GetDisk(const std::string& name_or_id);
  // An instance made through the control API (no saga); returns its id.
  std::string ControlInstance(const std::string& name, const std::string& run_state);
  // The simulator's request log entries (/v1 only) matching `method` and `operation`.
  int CountRequests(const std::string& method, const std::string& operation);
  void ClearRequestLog();
  void SetFaults(const nlohmann::json& rules, int seed = 1);

  OxideClient& client() { return *client_; }
  sim_test::SimProcess& sim() { return *sim_; }
  sim_test::HttpClient& control() { return *control_; }
  uv_loop_t* loop() { return &loop_; }
  oxide::testing::ManualClock& clock() { return clock_; }

  // Runs the loop without blocking until Busy() is false (or `limit` passes); false on timeout.
  bool RunUntilIdle(std::chrono::milliseconds limit = std::chrono::seconds(30));

  uv_loop_t loop_{};
  oxide::testing::ManualClock clock_;
  std::unique_ptr<sim_test::SimProcess> sim_;
  std::unique_ptr<sim_test::HttpClient> control_;
  std::unique_ptr<OxideClient> client_;
};

// The status code and that the message contains every part.
void ExpectError(const Status& status, StatusCode code, const std::vector<std::string>& parts);

}  // namespace backend_test
