// The plugin's /metrics through real HTTP while it serves real CSI calls (--mode=all against
// oxide-sim with guest devices: needs root): every family is exposed with HELP and TYPE, the
// ones the calls touch move, and no label value carries an id, a name or the token — each label
// takes its values from a small fixed set, whatever names and ids the calls used.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "guest_volume_fixture.h"
#include "support/metrics_scrape.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

constexpr const char* kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ_";
constexpr const char* kLower = "abcdefghijklmnopqrstuvwxyz_";
constexpr const char* kLetters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

// Label value checks (plain functions: GCC 12 warns inside std::regex in ASan builds).
bool Only(const std::string& value, const char* characters) {
  return !value.empty() && value.find_first_not_of(characters) == std::string::npos;
}
bool OneOf(const std::string& value, std::initializer_list<const char*> choices) {
  for (const char* choice : choices)
    if (value == choice) return true;
  return false;
}
// An HTTP status (100-599) or the kind of transport failure.
bool IsStatus(const std::string& value) {
  if (OneOf(value, {"timeout", "connect", "tls", "error"})) return true;
  return value.size() == 3 && Only(value, "0123456789") && value[0] >= '1' && value[0] <= '5';
}

class MetricsTest : public GuestVolumeTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    std::vector<std::string> args = GuestVolumeTest::plugin_args();
    args.push_back("--metrics-address=127.0.0.1:0");
    return args;
  }
  Scrape Get() { return ScrapeOf(*plugin_); }
};

class RecoveryMetricsTest : public ControllerTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    return {"--metrics-address=127.0.0.1:0", "--shutdown-grace-seconds=1"};
  }
};

// A create cut off by a shutdown is settled by the next start's recovery, which counts it.
TEST_F(RecoveryMetricsTest, RecoveryAtStartCountsTheEntriesItSettled) {
  SetSimFaults({{{"operation", "disk_create"}, {"latency_ms", 4000}}});
  std::thread create([this] {
    grpc::Status cut = Create(CreateRequest("pvc-cut-off"));
    EXPECT_EQ(cut.error_code(), grpc::StatusCode::UNAVAILABLE) << cut.error_message();
  });
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("POST", "disk_create") == 1; },
                        std::chrono::seconds(10)));
  StopPlugin();  // the grace (1 s) ends before Oxide answers: the journal entry stays pending
  create.join();
  SetSimFaults(nlohmann::json::array());
  StartPlugin();
  ASSERT_TRUE(plugin_->WaitForLog("reconciled an unfinished operation")) << plugin_->Log();
  const Scrape after = ScrapeOf(*plugin_);
  EXPECT_EQ(after.Sum("oxide_csi_recovery_entries_total"), 1) << "one entry settled";
}

TEST_F(MetricsTest, EveryFamilyIsExposedTheCallsMoveThemAndLabelsStayBounded) {
  const Scrape before = Get();
  auto node = csi::v1::Node::NewStub(UnixChannel(setup_->socket_path()));

  // Calls with many distinct names and ids: none of them may reach a label.
  std::vector<std::string> secrets_and_ids = {node_id_, "oxide-token"};
  std::vector<csi::v1::Volume> volumes;
  for (int i = 0; i < 12; ++i) {
    volumes.push_back(MustCreate("pvc-metrics-" + std::to_string(i) + "-a1b2c3", 1));
    secrets_and_ids.push_back(volumes.back().volume_id());
    secrets_and_ids.push_back("pvc-metrics-" + std::to_string(i));
  }
  MountAndCheck(*node, volumes[0]);  // stage (mkfs) and publish on the node
  UnmountAndDetach(*node, volumes[0]);
  csi::v1::CreateSnapshotRequest take;
  take.set_name("snap-metrics-x9");
  take.set_source_volume_id(volumes[1].volume_id());
  csi::v1::CreateSnapshotResponse taken;
  ASSERT_TRUE(controller_->CreateSnapshot(Call().get(), take, &taken).ok());
  secrets_and_ids.push_back(taken.snapshot().snapshot_id());
  secrets_and_ids.push_back("snap-metrics-x9");
  ExpectCode(Publish(volumes[2].volume_id(), "7a0c4f3e-0000-4000-8000-00000000dead"),
             grpc::StatusCode::NOT_FOUND);
  // Oxide answers 503 to every capacity query: the plugin retries, then gives up.
  SetSimFaults({{{"operation", "utilization_view"}, {"error_503", 1.0}, {"retry_after_s", 0}}});
  csi::v1::GetCapacityRequest capacity;
  csi::v1::GetCapacityResponse capacity_answer;
  EXPECT_FALSE(controller_->GetCapacity(Call().get(), capacity, &capacity_answer).ok());
  SetSimFaults(nlohmann::json::array());
  for (const csi::v1::Volume& volume : volumes)
    ASSERT_TRUE(Delete(volume.volume_id()).ok());

  const Scrape after = Get();
  const std::map<std::string, std::string> families = {
      {"oxide_csi_rpc_duration_seconds", "histogram"},
      {"oxide_csi_rpcs_in_flight", "gauge"},
      {"oxide_csi_oxide_request_duration_seconds", "histogram"},
      {"oxide_csi_oxide_request_retries_total", "counter"},
      {"oxide_csi_oxide_requests_queued", "gauge"},
      {"oxide_csi_token_reloads_total", "counter"},
      {"oxide_csi_oxide_api_up", "gauge"},
      {"oxide_csi_oxide_token_valid", "gauge"},
      {"oxide_csi_oxide_project_found", "gauge"},
      {"oxide_csi_operations_pending", "gauge"},
      {"oxide_csi_oldest_pending_operation_start_time_seconds", "gauge"},
      {"oxide_csi_recovery_entries_total", "counter"},
      {"oxide_csi_snapshots_tracked", "gauge"},
      {"oxide_csi_store_commit_duration_seconds", "histogram"},
      {"oxide_csi_store_commit_batch_size", "histogram"},
      {"oxide_csi_store_commit_failures_total", "counter"},
      {"oxide_csi_journal_entries_pruned_total", "counter"},
      {"oxide_csi_state_db_bytes", "gauge"},
      {"oxide_csi_loop_turn_duration_seconds", "histogram"},
      {"oxide_csi_node_operation_duration_seconds", "histogram"},
      {"oxide_csi_node_mkfs_duration_seconds", "histogram"},
      {"oxide_csi_build_info", "gauge"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_cpu_seconds_total", "counter"},
      {"process_open_fds", "gauge"},
      {"process_start_time_seconds", "gauge"}};
  for (const auto& [name, type] : families)
    EXPECT_EQ(after.types.count(name) ? after.types.at(name) : "missing", type) << name;

  // What the calls above must have moved.
  for (const char* moved :
       {"oxide_csi_rpc_duration_seconds_count{method=\"CreateVolume\"",
        "oxide_csi_rpc_duration_seconds_count{method=\"NodeStageVolume\"",
        "oxide_csi_oxide_request_duration_seconds_count{operation=\"disk_create\"",
        "oxide_csi_oxide_request_duration_seconds_count{operation=\"instance_disk_attach\"",
        "oxide_csi_oxide_request_retries_total{operation=\"utilization_view\"",
        "oxide_csi_store_commit_duration_seconds_count", "oxide_csi_store_commit_batch_size_count",
        "oxide_csi_loop_turn_duration_seconds_count",
        "oxide_csi_node_operation_duration_seconds_count{operation=\"stage\"",
        "oxide_csi_node_operation_duration_seconds_count{operation=\"unpublish\"",
        "oxide_csi_node_mkfs_duration_seconds_count"}) {
    EXPECT_GT(after.Sum(moved), before.Sum(moved)) << moved;
  }
  EXPECT_EQ(after.Sum("oxide_csi_rpc_duration_seconds_count{method=\"ControllerPublishVolume\","
                      "code=\"NOT_FOUND\"}"),
            1);
  EXPECT_EQ(after.Sum("oxide_csi_oxide_request_duration_seconds_count{operation=\"utilization_"
                      "view\",status=\"503\"}"),
            4);
  EXPECT_EQ(after.samples.count("oxide_csi_operations_pending{kind=\"create\"}"), 1U);
  EXPECT_EQ(after.Sum("oxide_csi_operations_pending"), 0) << "every operation finished";
  EXPECT_EQ(after.samples.count("oxide_csi_oldest_pending_operation_start_time_seconds"), 1U);
  EXPECT_EQ(after.Sum("oxide_csi_oldest_pending_operation_start_time_seconds"), 0);
  // Oxide answered all along (the 503s above were single requests, far inside the grace).
  for (const char* up :
       {"oxide_csi_oxide_api_up", "oxide_csi_oxide_token_valid", "oxide_csi_oxide_project_found"}) {
    EXPECT_EQ(after.samples.count(up), 1U) << up;
    EXPECT_EQ(after.Sum(up), 1) << up;
  }
  EXPECT_EQ(after.Sum("oxide_csi_rpcs_in_flight{method=\"CreateVolume\"}"), 0);
  EXPECT_EQ(after.Sum("oxide_csi_build_info{"), 1);
  EXPECT_GT(after.Sum("process_resident_memory_bytes"), 1e6);

  // Bounded label values: each label from its fixed set, never an id, a name or the token.
  const std::map<std::string, std::function<bool(const std::string&)>> allowed = {
      {"method",
       [](const std::string& v) { return !v.empty() && isupper(v[0]) && Only(v, kLetters); }},
      {"code", [](const std::string& v) { return Only(v, kUpper); }},
      {"result", [](const std::string& v) { return Only(v, kUpper); }},
      {"operation", [](const std::string& v) { return Only(v, kLower); }},
      {"status", &IsStatus},
      {"reason", &IsStatus},
      {"kind",
       [](const std::string& v) {
         return OneOf(
             v, {"create", "delete", "publish", "unpublish", "snapshot_create", "snapshot_delete"});
       }},
      {"outcome",
       [](const std::string& v) {
         return OneOf(v, {"done", "failed", "rolled_back"});
       }},
      {"le", [](const std::string& v) { return v == "+Inf" || Only(v, "0123456789.e+-"); }},
      {"version",
       [](const std::string& v) {
         return !v.empty() && isdigit(v[0]) && Only(v, "0123456789.-+abcdefghijklmnopqrstuvwxyz");
       }},
      {"mode",
       [](const std::string& v) {
         return OneOf(v, {"all", "controller", "node"});
       }},
      {"family",
       [](const std::string& v) { return v.rfind("oxide_csi_", 0) == 0 && Only(v, kLower); }}};
  const std::pair<std::string, std::string> create_method{"method", "CreateVolume"};
  EXPECT_NE(std::find(after.labels.begin(), after.labels.end(), create_method), after.labels.end())
      << "the labels were read";
  for (const auto& [name, value] : after.labels) {
    ASSERT_TRUE(allowed.count(name)) << "unexpected label " << name << "=" << value;
    EXPECT_TRUE(allowed.at(name)(value)) << name << "=" << value;
    for (const std::string& secret : secrets_and_ids)
      EXPECT_EQ(value.find(secret), std::string::npos) << name << "=" << value;
  }
  EXPECT_LT(after.samples.size(), 1500U) << "series";
}

}  // namespace
}  // namespace oxide::testing
