// Test support for the Controller service end to end: a real oxide-sim on loopback, the real
// plugin binary in controller mode talking to it, and a gRPC Controller stub on the real unix
// socket, with request builders and a view of the simulator's state. gtest main thread only.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "csi.grpc.pb.h"
#include "http_client.h"
#include "sim_process.h"
#include "support/plugin_setup.h"

namespace oxide::testing {

constexpr int64_t kGiB = int64_t{1} << 30;

class ControllerTest : public ::testing::Test {
 protected:
  virtual std::vector<std::string> sim_args() const { return {}; }
  virtual std::vector<std::string> plugin_args() const { return {}; }
  virtual std::string mode() const { return "controller"; }
  // Called after the simulator started and before the plugin starts.
  virtual void BeforePluginStart() {}

  void SetUp() override;
  void TearDown() override;
  void StartPlugin();
  void StopPlugin();

  std::unique_ptr<grpc::ClientContext> Call(
      std::chrono::milliseconds timeout = std::chrono::seconds(20));

  static csi::v1::VolumeCapability MountCapability(
      csi::v1::VolumeCapability_AccessMode::Mode mode =
          csi::v1::VolumeCapability_AccessMode::SINGLE_NODE_WRITER);
  static csi::v1::CreateVolumeRequest CreateRequest(const std::string& name, int64_t gib = 1);

  // Calls that must succeed (the test fails otherwise).
  csi::v1::Volume MustCreate(const std::string& name, int64_t gib = 1);
  csi::v1::ControllerPublishVolumeResponse MustPublish(const std::string& volume_id,
                                                       const std::string& node);

  grpc::Status Create(const csi::v1::CreateVolumeRequest& request,
                      csi::v1::CreateVolumeResponse* response = nullptr);
  grpc::Status Delete(const std::string& volume_id);
  grpc::Status Publish(const std::string& volume_id, const std::string& node,
                       csi::v1::ControllerPublishVolumeResponse* response = nullptr);
  grpc::Status Unpublish(const std::string& volume_id, const std::string& node);

  // An instance made through the simulator's control API; returns its id.
  std::string Instance(const std::string& name, const std::string& run_state = "stopped");
  nlohmann::json SimDisk(const std::string& id_or_name);
  int CountSimRequests(const std::string& method, const std::string& operation);
  void SetSimFaults(const nlohmann::json& rules);
  // Waits for the plugin to log `record` (e.g. the outcome of its start-up checks), then asks
  // Probe once.
  grpc::Status ProbeAfterLogged(const std::string& record);
  // Asks Probe once.
  grpc::Status Probe();
  // Sends `wire`, hand-made bytes, as the request of the csi.v1 method `path` (e.g.
  // "/csi.v1.Controller/CreateVolume"): what a client that protobuf would stop cannot send.
  grpc::Status SendBytes(const std::string& path, const std::string& wire);
  // Asks Probe until its answer has `code` and contains `message_part` (Probe changes on
  // background checks, so a test waits for the change); returns the last answer. `limit` is a
  // safety net only.
  grpc::Status ProbeUntil(grpc::StatusCode code, const std::string& message_part = "",
                          std::chrono::milliseconds limit = std::chrono::seconds(45));

  std::unique_ptr<sim_test::SimProcess> sim_;
  std::unique_ptr<sim_test::HttpClient> api_;
  std::unique_ptr<PluginSetup> setup_;
  std::unique_ptr<PluginProcess> plugin_;
  std::unique_ptr<csi::v1::Controller::Stub> controller_;
};

void ExpectCode(const grpc::Status& status, grpc::StatusCode code,
                const std::string& message_part = "");

// The first line of `log` that holds `text` (empty when none).
std::string LogLineWith(const std::string& log, const std::string& text);

}  // namespace oxide::testing
