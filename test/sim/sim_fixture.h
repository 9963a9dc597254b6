// Test support: a gtest fixture with a fresh oxide-sim process per test, a client, and
// helpers for the common set-up calls and error assertions. gtest main thread only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "http_client.h"
#include "sim_process.h"

namespace sim_test {

constexpr uint64_t kGiB = 1024ULL * 1024 * 1024;

class SimTest : public ::testing::Test {
 protected:
  // Extra oxide-sim flags for this fixture (override in subclasses).
  virtual std::vector<std::string> sim_args() const { return {}; }

  void SetUp() override {
    sim_ = std::make_unique<SimProcess>(sim_args());
    ASSERT_TRUE(sim_->running());
    client_ = std::make_unique<HttpClient>(sim_->base_url());
  }
  void TearDown() override {
    client_.reset();
    if (sim_ && sim_->running()) {
      const int status = sim_->stop();
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "oxide-sim exited badly (status " << status << "): " << sim_->stderr_text();
    }
  }

  HttpClient& api() { return *client_; }
  SimProcess& sim() { return *sim_; }

  // Creates a disk in project "demo" (or `project`); asserts 201; returns the body.
  nlohmann::json create_disk(const std::string& name, uint64_t gib = 1, int block_size = 4096,
                             const std::string& project = "demo");
  // Creates an instance through the control API.
  nlohmann::json control_instance(const std::string& name, const std::string& run_state,
                                  bool guest_local = false, const std::string& project = "demo");
  nlohmann::json attach(const std::string& instance, const std::string& disk, long expect = 202);
  nlohmann::json disk_state(const std::string& name);  // state object of a demo disk

  std::unique_ptr<SimProcess> sim_;
  std::unique_ptr<HttpClient> client_;
};

// Asserts an error reply: status, error_code (nullptr = must be absent), exact message,
// and request_id equal to the x-request-id header.
void expect_error(const Reply& reply, long status, const char* error_code,
                  const std::string& message);

}  // namespace sim_test
