// Two controller replicas on one simulator, as the Deployment runs them with one Lease per
// sidecar (docs/replicas.md): creates and deletes go to replica A (the provisioner's Lease),
// publishes, unpublishes, snapshots and a clone to replica B (the attacher's and snapshotter's).
// A is SIGKILLed while its operations are in flight (disk creates, a delete and a clone in Oxide
// sagas) and replaced by a fresh plugin with an empty database; the client retries what failed,
// with the same arguments, as a CO would, except the clone whose claim was "deleted" meanwhile:
// its temporary snapshot is left for the replacement's orphan sweep. Afterwards, from the
// simulator's API: no CSI name has two disks, nothing deleted is left, no csi-clone-* snapshot is
// left, and every call the client saw succeed is true in Oxide.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "csi.grpc.pb.h"
#include "http_client.h"
#include "sim_process.h"
#include "support/plugin_setup.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;
using grpc::StatusCode;
constexpr int64_t kGiB = int64_t{1} << 30;

// One controller replica: its own socket and database, the real plugin binary.
struct Replica {
  Replica(const std::string& oxide_url, const std::vector<std::string>& extra_args)
      : setup("controller") {
    setup.env["OXIDE_HOST"] = oxide_url;
    setup.env["OXIDE_TOKEN"] = sim_test::SimProcess::kToken;
    setup.env["OXIDE_PROJECT"] = "demo";
    setup.args.push_back("--oxide-insecure");
    for (const std::string& arg : extra_args)
      setup.args.push_back(arg);
    process = setup.Start();
    controller = csi::v1::Controller::NewStub(UnixChannel(setup.socket_path()));
  }

  PluginSetup setup;
  std::unique_ptr<PluginProcess> process;
  std::unique_ptr<csi::v1::Controller::Stub> controller;
};

std::unique_ptr<grpc::ClientContext> Deadline(std::chrono::milliseconds timeout = 20s) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + timeout);
  return context;
}

csi::v1::CreateVolumeRequest CreateRequest(const std::string& name, int64_t gib,
                                           const std::string& clone_of = "") {
  csi::v1::CreateVolumeRequest request;
  request.set_name(name);
  request.mutable_capacity_range()->set_required_bytes(gib * kGiB);
  auto* capability = request.add_volume_capabilities();
  capability->mutable_mount()->set_fs_type("ext4");
  capability->mutable_access_mode()->set_mode(
      csi::v1::VolumeCapability_AccessMode::SINGLE_NODE_WRITER);
  if (!clone_of.empty()) {
    request.mutable_volume_content_source()->mutable_volume()->set_volume_id(clone_of);
  }
  return request;
}

// What the client saw answered OK, in order: what must be true in Oxide at the end.
struct Answered {
  std::map<std::string, std::string> created;    // CSI name -> volume id
  std::map<std::string, int64_t> size_gib;       // CSI name -> requested size
  std::set<std::string> deleted;                 // volume ids
  std::map<std::string, std::string> published;  // volume id -> instance id (last publish)
  std::map<std::string, std::string> snapshots;  // CSI snapshot name -> snapshot id
  std::set<std::string> deleted_snapshots;       // snapshot ids
};

class TwoReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<sim_test::SimProcess>(std::vector<std::string>{"--project", "demo"});
    ASSERT_TRUE(sim_->running());
    api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
    for (const char* name : {"node-1", "node-2"}) {
      sim_test::Reply reply = api_->post(
          "/__sim/instances", {{"project", "demo"}, {"name", name}, {"run_state", "stopped"}});
      ASSERT_EQ(reply.status, 201) << reply.body;
      instances_.push_back(reply.json().value("id", ""));
    }
  }

  void TearDown() override {
    for (Replica* replica : {a_.get(), b_.get()}) {
      if (replica == nullptr || !replica->process->running()) continue;
      replica->process->Signal(SIGTERM);
      EXPECT_EQ(replica->process->WaitExit(), 0) << replica->process->Log();
    }
    a_.reset();
    b_.reset();
    if (sim_ && sim_->running()) sim_->stop();
  }

  // A call retried as a CO retries: the same request again after a failure (a refused or cut-off
  // call, ABORTED while busy, a deadline), until it succeeds; on `replica()` as it is at each try
  // (the Lease holder may change between tries). Fails the test when it never succeeds.
  template <typename Call>
  grpc::Status UntilOk(const std::function<Replica*()>& replica, Call call) {
    grpc::Status last;
    bool ok = WaitUntil(
        [&] {
          last = call(*replica());
          return last.ok();
        },
        40s, 100ms);
    EXPECT_TRUE(ok) << "never succeeded: " << last.error_code() << " " << last.error_message();
    return last;
  }

  grpc::Status Create(Replica& r, const csi::v1::CreateVolumeRequest& request) {
    csi::v1::CreateVolumeResponse response;
    grpc::Status status = r.controller->CreateVolume(Deadline().get(), request, &response);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_.created[request.name()] = response.volume().volume_id();
      answered_.size_gib[request.name()] = request.capacity_range().required_bytes() / kGiB;
      EXPECT_EQ(response.volume().capacity_bytes(), request.capacity_range().required_bytes());
    }
    return status;
  }
  grpc::Status Delete(Replica& r, const std::string& volume_id) {
    csi::v1::DeleteVolumeRequest request;
    request.set_volume_id(volume_id);
    csi::v1::DeleteVolumeResponse response;
    grpc::Status status = r.controller->DeleteVolume(Deadline().get(), request, &response);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_.deleted.insert(volume_id);
    }
    return status;
  }
  grpc::Status Publish(Replica& r, const std::string& volume_id, const std::string& node) {
    csi::v1::ControllerPublishVolumeRequest request;
    request.set_volume_id(volume_id);
    request.set_node_id(node);
    request.mutable_volume_capability()->mutable_mount()->set_fs_type("ext4");
    request.mutable_volume_capability()->mutable_access_mode()->set_mode(
        csi::v1::VolumeCapability_AccessMode::SINGLE_NODE_WRITER);
    csi::v1::ControllerPublishVolumeResponse response;
    grpc::Status status =
        r.controller->ControllerPublishVolume(Deadline().get(), request, &response);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_.published[volume_id] = node;
    }
    return status;
  }
  grpc::Status Unpublish(Replica& r, const std::string& volume_id, const std::string& node) {
    csi::v1::ControllerUnpublishVolumeRequest request;
    request.set_volume_id(volume_id);
    request.set_node_id(node);
    csi::v1::ControllerUnpublishVolumeResponse response;
    grpc::Status status =
        r.controller->ControllerUnpublishVolume(Deadline().get(), request, &response);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_.published.erase(volume_id);
    }
    return status;
  }
  grpc::Status Snapshot(Replica& r, const std::string& name, const std::string& volume_id) {
    csi::v1::CreateSnapshotRequest request;
    request.set_name(name);
    request.set_source_volume_id(volume_id);
    csi::v1::CreateSnapshotResponse response;
    grpc::Status status = r.controller->CreateSnapshot(Deadline().get(), request, &response);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_.snapshots[name] = response.snapshot().snapshot_id();
    }
    return status;
  }
  grpc::Status DeleteSnapshot(Replica& r, const std::string& snapshot_id) {
    csi::v1::DeleteSnapshotRequest request;
    request.set_snapshot_id(snapshot_id);
    csi::v1::DeleteSnapshotResponse response;
    grpc::Status status = r.controller->DeleteSnapshot(Deadline().get(), request, &response);
    if (status.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      answered_.deleted_snapshots.insert(snapshot_id);
    }
    return status;
  }

  std::vector<nlohmann::json> List(const std::string& what) {
    sim_test::Reply reply = api_->get("/v1/" + what + "?project=demo&limit=1000");
    EXPECT_EQ(reply.status, 200) << reply.body;
    return reply.json().value("items", std::vector<nlohmann::json>{});
  }
  // The CSI volume name a disk's description records ("" when it is not the plugin's).
  static std::string CsiNameOf(const nlohmann::json& disk) {
    static const std::regex kOwner("^oxide-csi volume \"([^\"]*)\"");
    std::smatch match;
    const std::string description = disk.value("description", "");
    return std::regex_search(description, match, kOwner) ? match[1].str() : "";
  }
  std::string VolumeId(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    return answered_.created.at(name);
  }

  std::unique_ptr<sim_test::SimProcess> sim_;
  std::unique_ptr<sim_test::HttpClient> api_;
  std::vector<std::string> instances_;
  std::unique_ptr<Replica> a_, b_;
  std::mutex mutex_;
  Answered answered_;
};

TEST_F(TwoReplicasTest, AReplacedReplicaLeavesNothingBehindAndEveryAnswerIsTrueInOxide) {
  a_ = std::make_unique<Replica>(sim_->base_url(), std::vector<std::string>{});
  b_ = std::make_unique<Replica>(sim_->base_url(), std::vector<std::string>{});
  auto on_a = [this] { return a_.get(); };
  auto on_b = [this] { return b_.get(); };
  const std::string& node1 = instances_[0];
  const std::string& node2 = instances_[1];

  // ---- both replicas up: each kind of call on the replica whose sidecar holds its Lease.
  const std::vector<std::pair<std::string, int64_t>> first = {
      {"pvc-v1", 1}, {"pvc-v2", 2}, {"pvc-v3", 1}, {"pvc-v4", 1}};
  for (const auto& [name, gib] : first) {
    UntilOk(on_a, [&](Replica& r) { return Create(r, CreateRequest(name, gib)); });
  }
  const std::string v1 = VolumeId("pvc-v1"), v2 = VolumeId("pvc-v2"), v3 = VolumeId("pvc-v3"),
                    v4 = VolumeId("pvc-v4");
  UntilOk(on_b, [&](Replica& r) { return Publish(r, v1, node1); });
  UntilOk(on_b, [&](Replica& r) { return Publish(r, v2, node2); });
  UntilOk(on_b, [&](Replica& r) { return Snapshot(r, "snap-s1", v1); });
  UntilOk(on_b, [&](Replica& r) { return Snapshot(r, "snap-s2", v3); });
  const std::string s2 = answered_.snapshots.at("snap-s2");
  UntilOk(on_b, [&](Replica& r) { return DeleteSnapshot(r, s2); });
  // A clone on B (its temporary snapshot is B's and gone when it answers).
  UntilOk(on_b, [&](Replica& r) { return Create(r, CreateRequest("pvc-c1", 1, v3)); });
  UntilOk(on_a, [&](Replica& r) { return Delete(r, v4); });
  UntilOk(on_b, [&](Replica& r) { return Unpublish(r, v2, node2); });

  // ---- Oxide slows down (5 s create and delete sagas); A gets work and is killed mid-way.
  ASSERT_EQ(
      api_->put("/__sim/config", {{"create_delay_ms", 5000}, {"delete_delay_ms", 5000}}).status,
      200);
  Replica* killed = a_.get();
  auto on_killed = [&](auto call) {
    return std::async(std::launch::async, [this, killed, call] { return call(*killed); });
  };
  auto create_v5 = on_killed([this](Replica& r) { return Create(r, CreateRequest("pvc-v5", 1)); });
  auto create_v6 = on_killed([this](Replica& r) { return Create(r, CreateRequest("pvc-v6", 3)); });
  auto delete_v3 = on_killed([this, v3](Replica& r) { return Delete(r, v3); });
  // A clone whose claim the user deletes while it is being made: never retried.
  auto clone_x =
      on_killed([this, v1](Replica& r) { return Create(r, CreateRequest("pvc-x", 1, v1)); });
  // B meanwhile (the attacher's replica is not the one killed).
  auto publish_v2 =
      std::async(std::launch::async, [this, node1, v2] { return Publish(*b_, v2, node1); });
  // In flight in Oxide: v5 and v6 being created, v3 being deleted, X's temporary snapshot taken.
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::set<std::string> creating;
        bool v3_there = false;
        for (const nlohmann::json& disk : List("disks")) {
          if (disk["state"]["state"] == "creating") creating.insert(CsiNameOf(disk));
          if (disk.value("id", "") == v3) v3_there = true;
        }
        bool clone_snapshot = false;
        for (const nlohmann::json& snapshot : List("snapshots")) {
          const std::string name = snapshot.value("name", "");
          clone_snapshot |= name.rfind("csi-clone-", 0) == 0 && name.find("pvc-x") != name.npos;
        }
        return creating.count("pvc-v5") && creating.count("pvc-v6") && !v3_there && clone_snapshot;
      },
      20s, 20ms))
      << "A's operations did not all reach Oxide";
  killed->process->Signal(SIGKILL);
  EXPECT_EQ(killed->process->WaitExit(10s), -1) << "killed by the signal";
  struct Outcome {
    const char* what;
    grpc::Status status;
  };
  std::vector<Outcome> outcomes = {{"create v5", create_v5.get()},
                                   {"create v6", create_v6.get()},
                                   {"delete v3", delete_v3.get()},
                                   {"clone x", clone_x.get()}};
  EXPECT_TRUE(publish_v2.get().ok());
  int cut_off = 0;
  for (const Outcome& outcome : outcomes) {
    if (outcome.status.ok()) continue;
    ++cut_off;
    EXPECT_TRUE(outcome.status.error_code() == StatusCode::UNAVAILABLE ||
                outcome.status.error_code() == StatusCode::CANCELLED)
        << outcome.what << ": " << outcome.status.error_code() << " "
        << outcome.status.error_message();
  }
  EXPECT_EQ(cut_off, 4) << "the kill came while all four were in flight";
  ASSERT_EQ(api_->put("/__sim/config", {{"create_delay_ms", 0}, {"delete_delay_ms", 0}}).status,
            200);

  // ---- the replacement: a fresh plugin, empty database, a short maximum age for its sweep.
  a_ = std::make_unique<Replica>(sim_->base_url(),
                                 std::vector<std::string>{"--clone-snapshot-max-age=1s"});
  UntilOk(on_a, [&](Replica& r) { return Create(r, CreateRequest("pvc-v5", 1)); });
  UntilOk(on_a, [&](Replica& r) { return Create(r, CreateRequest("pvc-v6", 3)); });
  UntilOk(on_a, [&](Replica& r) { return Delete(r, v3); });
  // Clone X is not retried: its temporary snapshot is an orphan, deleted by the sweep once old.
  EXPECT_TRUE(a_->process->WaitForLog("deleted a clone's temporary snapshot", 30s))
      << a_->process->Log();
  // A snapshot on B of a volume the replacement made, and a publish of it.
  const std::string v5 = VolumeId("pvc-v5");
  UntilOk(on_b, [&](Replica& r) { return Snapshot(r, "snap-s3", v5); });
  UntilOk(on_b, [&](Replica& r) { return Publish(r, v5, node2); });

  // ---- Oxide holds exactly what the answers say.
  std::map<std::string, std::vector<nlohmann::json>> disks_by_name;
  for (const nlohmann::json& disk : List("disks"))
    disks_by_name[CsiNameOf(disk)].push_back(disk);
  for (const auto& [name, disks] : disks_by_name) {
    EXPECT_EQ(disks.size(), 1u) << "CSI volume \"" << name << "\" has " << disks.size() << " disks";
  }
  std::set<std::string> live;
  for (const auto& [name, id] : answered_.created) {
    if (answered_.deleted.count(id)) {
      EXPECT_EQ(disks_by_name.count(name), 0u) << name << " was deleted";
      continue;
    }
    live.insert(name);
    ASSERT_EQ(disks_by_name.count(name), 1u) << name << " was created";
    const nlohmann::json& disk = disks_by_name[name][0];
    EXPECT_EQ(disk.value("id", ""), id) << name;
    EXPECT_EQ(disk.value("size", int64_t{0}), answered_.size_gib[name] * kGiB) << name;
    auto published = answered_.published.find(id);
    if (published != answered_.published.end()) {
      EXPECT_EQ(disk["state"]["state"], "attached") << name;
      EXPECT_EQ(disk["state"].value("instance", ""), published->second) << name;
    } else {
      EXPECT_EQ(disk["state"]["state"], "detached") << name;
    }
  }
  EXPECT_EQ(live, (std::set<std::string>{"pvc-v1", "pvc-v2", "pvc-v5", "pvc-v6", "pvc-c1"}));
  EXPECT_EQ(disks_by_name.size(), live.size()) << "no disk that no answer accounts for (pvc-x)";
  EXPECT_EQ(answered_.published,
            (std::map<std::string, std::string>{{v1, node1}, {v2, node1}, {v5, node2}}));

  std::set<std::string> snapshot_ids;
  for (const nlohmann::json& snapshot : List("snapshots")) {
    snapshot_ids.insert(snapshot.value("id", ""));
    EXPECT_NE(snapshot.value("name", "").rfind("csi-clone-", 0), 0u)
        << "a clone's temporary snapshot is left: " << snapshot.dump();
    EXPECT_EQ(snapshot.value("state", ""), "ready") << snapshot.dump();
  }
  std::set<std::string> expected_names, expected_ids;
  for (const auto& [name, id] : answered_.snapshots) {
    if (answered_.deleted_snapshots.count(id)) continue;
    expected_names.insert(name);
    expected_ids.insert(id);
  }
  EXPECT_EQ(expected_names, (std::set<std::string>{"snap-s1", "snap-s3"}));
  EXPECT_EQ(snapshot_ids, expected_ids) << "exactly the live CSI snapshots";
}

}  // namespace
}  // namespace oxide::testing
