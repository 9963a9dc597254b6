// The snapshot RPCs, restore and clone through the real socket against the real simulator:
// results, idempotency, each error, readiness flipping from false to true, upload tracking that
// resumes after a SIGKILL, and clones that leave no temporary snapshot behind, even when killed.
#include <gtest/gtest.h>

#include <future>
#include <set>

#include "controller_fixture.h"
#include "support/controller_rig.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;
using namespace std::chrono_literals;

constexpr const char* kUnknownUuid = "00000000-0000-4000-8000-000000000000";

class CsiSnapshotTest : public ControllerTest {
 protected:
  grpc::Status Snap(const std::string& name, const std::string& source,
                    csi::v1::Snapshot* snapshot = nullptr,
                    std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
    csi::v1::CreateSnapshotRequest request;
    request.set_name(name);
    request.set_source_volume_id(source);
    csi::v1::CreateSnapshotResponse response;
    grpc::Status status = controller_->CreateSnapshot(Call(timeout).get(), request, &response);
    if (snapshot != nullptr) *snapshot = response.snapshot();
    return status;
  }

  csi::v1::Snapshot MustSnap(const std::string& name, const std::string& source) {
    csi::v1::Snapshot snapshot;
    grpc::Status status = Snap(name, source, &snapshot);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return snapshot;
  }

  // Retries CreateSnapshot like the CO until ready_to_use.
  csi::v1::Snapshot SnapUntilReady(const std::string& name, const std::string& source) {
    csi::v1::Snapshot snapshot;
    const bool ready =
        WaitUntil([&] { return Snap(name, source, &snapshot, 2s).ok() && snapshot.ready_to_use(); },
                  60s, 50ms);
    if (!ready) ADD_FAILURE() << "snapshot " << name << " never became ready";
    return snapshot;
  }

  grpc::Status DeleteSnap(const std::string& id) {
    csi::v1::DeleteSnapshotRequest request;
    request.set_snapshot_id(id);
    csi::v1::DeleteSnapshotResponse response;
    return controller_->DeleteSnapshot(Call().get(), request, &response);
  }

  grpc::Status Get(const std::string& id, csi::v1::Snapshot* snapshot = nullptr) {
    csi::v1::GetSnapshotRequest request;
    request.set_snapshot_id(id);
    csi::v1::GetSnapshotResponse response;
    grpc::Status status = controller_->GetSnapshot(Call().get(), request, &response);
    if (snapshot != nullptr) *snapshot = response.snapshot();
    return status;
  }

  grpc::Status List(const csi::v1::ListSnapshotsRequest& request,
                    csi::v1::ListSnapshotsResponse* response) {
    return controller_->ListSnapshots(Call().get(), request, response);
  }

  csi::v1::CreateVolumeRequest FromSnapshot(const std::string& name, const std::string& id,
                                            int64_t gib = 1) {
    csi::v1::CreateVolumeRequest request = CreateRequest(name, gib);
    request.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(id);
    return request;
  }

  csi::v1::CreateVolumeRequest FromVolume(const std::string& name, const std::string& id,
                                          int64_t gib = 1) {
    csi::v1::CreateVolumeRequest request = CreateRequest(name, gib);
    request.mutable_volume_content_source()->mutable_volume()->set_volume_id(id);
    return request;
  }

  // Every snapshot (or disk) of the project as the simulator has it.
  std::vector<nlohmann::json> SimList(const std::string& collection) {
    sim_test::Reply reply = api_->get("/v1/" + collection + "?project=demo&limit=1000");
    EXPECT_EQ(reply.status, 200) << reply.body;
    const nlohmann::json body = reply.json();
    std::vector<nlohmann::json> items;
    for (const auto& item : body["items"])
      items.push_back(item);
    return items;
  }
  std::vector<nlohmann::json> SimSnapshots() { return SimList("snapshots"); }
  std::vector<nlohmann::json> SimDisksAll() { return SimList("disks"); }

  void Control(const std::string& what, const nlohmann::json& target) {
    sim_test::Reply reply = api_->post("/__sim/" + what, target);
    ASSERT_EQ(reply.status, 200) << reply.body;
  }

  // The plugin holds its database exclusively: stop it first.
  std::vector<std::vector<std::string>> Db(const std::string& sql) {
    EXPECT_EQ(plugin_, nullptr) << "stop the plugin before reading its database";
    std::string error;
    auto rows = SqliteQuery(setup_->state_db(), sql, &error);
    EXPECT_EQ(error, "");
    return rows;
  }
};

// ---- CreateSnapshot ---------------------------------------------------------------------------

TEST_F(CsiSnapshotTest, CreateSnapshotIsReadyAndIdempotent) {
  csi::v1::Volume volume = MustCreate("pvc-snap-src", 2);
  csi::v1::Snapshot first = MustSnap("snap-one", volume.volume_id());
  EXPECT_TRUE(first.ready_to_use());
  EXPECT_EQ(first.source_volume_id(), volume.volume_id());
  EXPECT_EQ(first.size_bytes(), 2 * kGiB);
  EXPECT_GT(first.creation_time().seconds(), 1700000000);
  csi::v1::Snapshot again = MustSnap("snap-one", volume.volume_id());
  EXPECT_EQ(again.snapshot_id(), first.snapshot_id());
  EXPECT_EQ(again.creation_time().seconds(), first.creation_time().seconds());
  std::vector<nlohmann::json> in_sim = SimSnapshots();
  ASSERT_EQ(in_sim.size(), 1u);
  EXPECT_EQ(in_sim[0]["id"], first.snapshot_id());
  EXPECT_EQ(in_sim[0]["name"].get<std::string>().rfind("csi-snap-", 0), 0u);
  EXPECT_EQ(in_sim[0]["description"], "oxide-csi snapshot \"snap-one\"");
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
}

TEST_F(CsiSnapshotTest, CreateSnapshotRejectsBadRequests) {
  csi::v1::Volume volume = MustCreate("pvc-snap-bad");
  ExpectCode(Snap("", volume.volume_id()), StatusCode::INVALID_ARGUMENT, "name is required");
  ExpectCode(Snap("snap-bad", ""), StatusCode::INVALID_ARGUMENT, "source_volume_id is required");
  ExpectCode(Snap("snap-bad", kUnknownUuid), StatusCode::NOT_FOUND, kUnknownUuid);
  ExpectCode(Snap("snap-bad", "not-a-volume"), StatusCode::NOT_FOUND, "not-a-volume");
  // Above CSI's 128-byte string limit: refused before any work, without echoing the name.
  ExpectCode(Snap(std::string(300, 'x'), volume.volume_id()), StatusCode::INVALID_ARGUMENT,
             "name is 300 bytes; a string may be at most 128 bytes");
  csi::v1::CreateSnapshotRequest request;
  request.set_name("snap-bad");
  request.set_source_volume_id(volume.volume_id());
  (*request.mutable_parameters())["tier"] = "gold";
  csi::v1::CreateSnapshotResponse response;
  ExpectCode(controller_->CreateSnapshot(Call().get(), request, &response),
             StatusCode::INVALID_ARGUMENT, "tier");
  request.clear_parameters();
  (*request.mutable_parameters())["csi.storage.k8s.io/volumesnapshot/name"] = "nightly";
  EXPECT_TRUE(controller_->CreateSnapshot(Call().get(), request, &response).ok());
  EXPECT_TRUE(SimSnapshots().size() == 1);
}

TEST_F(CsiSnapshotTest, TheSameNameForAnotherSourceAlreadyExists) {
  csi::v1::Volume a = MustCreate("pvc-snap-a");
  csi::v1::Volume b = MustCreate("pvc-snap-b");
  MustSnap("snap-taken", a.volume_id());
  ExpectCode(Snap("snap-taken", b.volume_id()), StatusCode::ALREADY_EXISTS, a.volume_id());
  EXPECT_EQ(SimSnapshots().size(), 1u);
}

TEST_F(CsiSnapshotTest, ASnapshotOxideMarksFaultedIsAnErrorAndCanBeDeleted) {
  csi::v1::Volume volume = MustCreate("pvc-snap-fault");
  csi::v1::Snapshot snapshot = MustSnap("snap-fault", volume.volume_id());
  Control("fault", {{"kind", "snapshot"}, {"id", snapshot.snapshot_id()}});
  ExpectCode(Snap("snap-fault", volume.volume_id()), StatusCode::INTERNAL, "faulted");
  csi::v1::ListSnapshotsResponse listed;
  ASSERT_TRUE(List({}, &listed).ok());
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_FALSE(listed.entries(0).snapshot().ready_to_use());
  ASSERT_TRUE(DeleteSnap(snapshot.snapshot_id()).ok());
  EXPECT_TRUE(SimSnapshots().empty());
}

// ---- DeleteSnapshot ---------------------------------------------------------------------------

TEST_F(CsiSnapshotTest, DeleteSnapshotIsIdempotent) {
  csi::v1::Volume volume = MustCreate("pvc-snap-del");
  csi::v1::Snapshot snapshot = MustSnap("snap-del", volume.volume_id());
  ASSERT_TRUE(DeleteSnap(snapshot.snapshot_id()).ok());
  EXPECT_TRUE(SimSnapshots().empty());
  EXPECT_TRUE(DeleteSnap(snapshot.snapshot_id()).ok());
  EXPECT_TRUE(DeleteSnap(kUnknownUuid).ok());
  EXPECT_TRUE(DeleteSnap("not-a-snapshot").ok());
  ExpectCode(DeleteSnap(""), StatusCode::INVALID_ARGUMENT, "snapshot_id is required");
  // The source volume is unaffected, and a snapshot outlives its source (Oxide's rule).
  csi::v1::Snapshot kept = MustSnap("snap-kept", volume.volume_id());
  ASSERT_TRUE(Delete(volume.volume_id()).ok());
  csi::v1::ListSnapshotsResponse listed;
  ASSERT_TRUE(List({}, &listed).ok());
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_EQ(listed.entries(0).snapshot().source_volume_id(), volume.volume_id());
  ASSERT_TRUE(DeleteSnap(kept.snapshot_id()).ok());
  StopPlugin();
  EXPECT_TRUE(Db("SELECT * FROM snapshots").empty());
  EXPECT_TRUE(Db("SELECT id FROM operations WHERE state = 'pending'").empty());
}

// ---- ListSnapshots ----------------------------------------------------------------------------

TEST_F(CsiSnapshotTest, ListSnapshotsPagesAndFilters) {
  csi::v1::Volume a = MustCreate("pvc-list-a");
  csi::v1::Volume b = MustCreate("pvc-list-b");
  std::set<std::string> of_a, all;
  for (int i = 0; i < 3; ++i) {
    of_a.insert(MustSnap("list-a-" + std::to_string(i), a.volume_id()).snapshot_id());
  }
  all = of_a;
  all.insert(MustSnap("list-b-0", b.volume_id()).snapshot_id());
  // A snapshot made outside the plugin is listed too: ListSnapshots shows the storage system's.
  sim_test::Reply outside = api_->post(
      "/v1/snapshots?project=demo",
      {{"name", "made-by-hand"}, {"description", "taken by an operator"}, {"disk", b.volume_id()}});
  ASSERT_EQ(outside.status, 201) << outside.body;
  all.insert(outside.json()["id"].get<std::string>());

  std::set<std::string> seen;
  csi::v1::ListSnapshotsRequest request;
  request.set_max_entries(2);
  for (int page = 0; page < 10; ++page) {
    csi::v1::ListSnapshotsResponse response;
    ASSERT_TRUE(List(request, &response).ok());
    EXPECT_LE(response.entries_size(), 2);
    for (const auto& entry : response.entries()) {
      EXPECT_TRUE(seen.insert(entry.snapshot().snapshot_id()).second) << "listed twice";
      EXPECT_TRUE(entry.snapshot().ready_to_use());
    }
    if (response.next_token().empty()) break;
    request.set_starting_token(response.next_token());
  }
  EXPECT_EQ(seen, all);

  csi::v1::ListSnapshotsRequest by_source;
  by_source.set_source_volume_id(a.volume_id());
  csi::v1::ListSnapshotsResponse filtered;
  ASSERT_TRUE(List(by_source, &filtered).ok());
  std::set<std::string> filtered_ids;
  for (const auto& entry : filtered.entries())
    filtered_ids.insert(entry.snapshot().snapshot_id());
  EXPECT_EQ(filtered_ids, of_a);

  csi::v1::ListSnapshotsRequest by_id;
  by_id.set_snapshot_id(*of_a.begin());
  csi::v1::ListSnapshotsResponse one;
  ASSERT_TRUE(List(by_id, &one).ok());
  ASSERT_EQ(one.entries_size(), 1);
  EXPECT_EQ(one.entries(0).snapshot().snapshot_id(), *of_a.begin());
  by_id.set_source_volume_id(b.volume_id());  // both filters: they must both hold
  ASSERT_TRUE(List(by_id, &one).ok());
  EXPECT_EQ(one.entries_size(), 0);
  by_id.Clear();
  by_id.set_snapshot_id(kUnknownUuid);
  ASSERT_TRUE(List(by_id, &one).ok());
  EXPECT_EQ(one.entries_size(), 0);
  by_id.set_snapshot_id("not-a-snapshot");
  ASSERT_TRUE(List(by_id, &one).ok());
  EXPECT_EQ(one.entries_size(), 0);

  csi::v1::ListSnapshotsRequest bad;
  bad.set_starting_token("garbage");
  ExpectCode(List(bad, &one), StatusCode::ABORTED, "garbage");
  bad.set_starting_token(std::string(4000, 'g'));  // within the 4 KiB limit; echoed cut
  grpc::Status long_token = List(bad, &one);
  ExpectCode(long_token, StatusCode::ABORTED, "\xe2\x80\xa6");
  EXPECT_LT(long_token.error_message().size(), 300u) << long_token.error_message();
  bad.set_starting_token("ox1.garbage");
  ExpectCode(List(bad, &one), StatusCode::ABORTED, "no longer valid");
  bad.Clear();
  bad.set_max_entries(-1);
  ExpectCode(List(bad, &one), StatusCode::INVALID_ARGUMENT, "max_entries");
}

// ---- GetSnapshot ------------------------------------------------------------------------------

TEST_F(CsiSnapshotTest, GetSnapshotIsOneOxideGetOfOneSnapshot) {
  csi::v1::Volume volume = MustCreate("pvc-get-src", 2);
  csi::v1::Snapshot taken = MustSnap("snap-get", volume.volume_id());
  const int gets_before = CountSimRequests("GET", "snapshot_view");
  csi::v1::Snapshot got;
  ASSERT_TRUE(Get(taken.snapshot_id(), &got).ok());
  EXPECT_EQ(CountSimRequests("GET", "snapshot_view"), gets_before + 1);
  EXPECT_EQ(got.snapshot_id(), taken.snapshot_id());
  EXPECT_EQ(got.source_volume_id(), volume.volume_id());
  EXPECT_EQ(got.size_bytes(), 2 * kGiB);
  EXPECT_EQ(got.creation_time().seconds(), taken.creation_time().seconds());
  EXPECT_TRUE(got.ready_to_use());

  ExpectCode(Get(""), StatusCode::INVALID_ARGUMENT, "snapshot_id is required");
  ExpectCode(Get("not-a-snapshot"), StatusCode::NOT_FOUND, "does not exist");
  ExpectCode(Get(kUnknownUuid), StatusCode::NOT_FOUND, kUnknownUuid);

  // Faulted in Oxide: still there, not ready to use.
  Control("fault", {{"kind", "snapshot"}, {"id", taken.snapshot_id()}});
  ASSERT_TRUE(Get(taken.snapshot_id(), &got).ok());
  EXPECT_FALSE(got.ready_to_use());
  ASSERT_TRUE(DeleteSnap(taken.snapshot_id()).ok());
  ExpectCode(Get(taken.snapshot_id()), StatusCode::NOT_FOUND, taken.snapshot_id());
}

TEST_F(CsiSnapshotTest, TheCliGetsOneSnapshot) {
  csi::v1::Volume volume = MustCreate("pvc-cli-get");
  csi::v1::Snapshot taken = MustSnap("snap-cli-get", volume.volume_id());
  const std::string endpoint = "--endpoint=unix://" + setup_->socket_path();
  ProcessResult text = RunProgram(CtlBinary(), {endpoint, "snapshot", "get", taken.snapshot_id()});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind(taken.snapshot_id() + "  source=" + volume.volume_id(), 0), 0u)
      << text.out;
  EXPECT_NE(text.out.find("ready_to_use=true"), std::string::npos) << text.out;
  ProcessResult json =
      RunProgram(CtlBinary(), {endpoint, "--output=json", "snapshot", "get", taken.snapshot_id()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["snapshot"]["snapshot_id"], taken.snapshot_id());
  ProcessResult missing = RunProgram(CtlBinary(), {endpoint, "snapshot", "get", kUnknownUuid});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("NOT_FOUND"), std::string::npos) << missing.err;
  EXPECT_EQ(RunProgram(CtlBinary(), {endpoint, "snapshot", "get"}).exit_code, 2);
}

// Oxide finds a snapshot by id in any project the token can see; the plugin acts only on its own.
TEST_F(CsiSnapshotTest, ASnapshotOfAnotherProjectIsNeverTouched) {
  ASSERT_EQ(api_->post("/__sim/projects", {{"name", "other"}}).status, 201);
  sim_test::Reply disk = api_->post("/v1/disks?project=other", sim_test::blank_disk("theirs"));
  ASSERT_EQ(disk.status, 201) << disk.body;
  const std::string their_disk = disk.json()["id"];
  sim_test::Reply snap =
      api_->post("/v1/snapshots?project=other",
                 {{"name", "their-snap"}, {"description", ""}, {"disk", their_disk}});
  ASSERT_EQ(snap.status, 201) << snap.body;
  const std::string foreign = snap.json()["id"];

  ExpectCode(DeleteSnap(foreign), StatusCode::FAILED_PRECONDITION, "belongs to another project");
  EXPECT_EQ(CountSimRequests("DELETE", "snapshot_delete"), 0);
  ExpectCode(Create(FromSnapshot("pvc-from-theirs", foreign)), StatusCode::FAILED_PRECONDITION,
             "belongs to another project");
  csi::v1::CreateSnapshotResponse ignored;
  csi::v1::CreateSnapshotRequest of_theirs;
  of_theirs.set_name("snap-of-theirs");
  of_theirs.set_source_volume_id(their_disk);
  // Oxide itself refuses a snapshot, made in the plugin's project, of another project's disk.
  ExpectCode(controller_->CreateSnapshot(Call().get(), of_theirs, &ignored),
             StatusCode::FAILED_PRECONDITION, "same project");

  // Not found by GetSnapshot, listed neither in full nor by id: like any object outside the
  // project.
  ExpectCode(Get(foreign), StatusCode::NOT_FOUND, "plugin's Oxide project");
  csi::v1::ListSnapshotsRequest by_id;
  by_id.set_snapshot_id(foreign);
  csi::v1::ListSnapshotsResponse listed;
  ASSERT_TRUE(List(by_id, &listed).ok());
  EXPECT_EQ(listed.entries_size(), 0);
  ASSERT_TRUE(List({}, &listed).ok());
  EXPECT_EQ(listed.entries_size(), 0);

  sim_test::Reply still = api_->get("/v1/snapshots/" + foreign);
  EXPECT_EQ(still.status, 200) << "another project's snapshot was deleted";
  StopPlugin();
  EXPECT_TRUE(Db("SELECT id FROM operations WHERE state = 'pending'").empty());
  EXPECT_TRUE(Db("SELECT * FROM snapshots").empty());
  EXPECT_TRUE(Db("SELECT * FROM volumes").empty());
}

// ---- CreateVolume from a snapshot (restore) and from a volume (clone) -------------------------

TEST_F(CsiSnapshotTest, RestoreIsAtLeastTheSnapshotSizeAndIdempotent) {
  csi::v1::Volume source = MustCreate("pvc-restore-src", 3);
  csi::v1::Snapshot snapshot = MustSnap("snap-restore", source.volume_id());
  csi::v1::CreateVolumeResponse restored;
  ASSERT_TRUE(Create(FromSnapshot("pvc-restored", snapshot.snapshot_id(), 1), &restored).ok());
  EXPECT_EQ(restored.volume().capacity_bytes(), 3 * kGiB);
  EXPECT_EQ(restored.volume().content_source().snapshot().snapshot_id(), snapshot.snapshot_id());
  nlohmann::json disk = SimDisk(restored.volume().volume_id());
  EXPECT_EQ(disk["snapshot_id"], snapshot.snapshot_id());
  csi::v1::CreateVolumeResponse again;
  ASSERT_TRUE(Create(FromSnapshot("pvc-restored", snapshot.snapshot_id(), 1), &again).ok());
  EXPECT_EQ(again.volume().volume_id(), restored.volume().volume_id());
  // The same name without the source, or with another source, is another volume.
  ExpectCode(Create(CreateRequest("pvc-restored", 3)), StatusCode::ALREADY_EXISTS,
             "made from snapshot");
  csi::v1::Snapshot other = MustSnap("snap-restore-2", source.volume_id());
  ExpectCode(Create(FromSnapshot("pvc-restored", other.snapshot_id(), 1)),
             StatusCode::ALREADY_EXISTS, "not made from snapshot");
  // The snapshot gone, a retry still gets the volume made from it.
  ASSERT_TRUE(DeleteSnap(snapshot.snapshot_id()).ok());
  ASSERT_TRUE(Create(FromSnapshot("pvc-restored", snapshot.snapshot_id(), 1), &again).ok());
  EXPECT_EQ(again.volume().volume_id(), restored.volume().volume_id());
  ExpectCode(Create(FromSnapshot("pvc-restored-late", snapshot.snapshot_id(), 1)),
             StatusCode::NOT_FOUND, snapshot.snapshot_id());
}

TEST_F(CsiSnapshotTest, RestoreRejectsALimitBelowTheSnapshotAndUnknownSnapshots) {
  csi::v1::Volume source = MustCreate("pvc-limit-src", 2);
  csi::v1::Snapshot snapshot = MustSnap("snap-limit", source.volume_id());
  csi::v1::CreateVolumeRequest small = FromSnapshot("pvc-limit", snapshot.snapshot_id(), 1);
  small.mutable_capacity_range()->set_limit_bytes(kGiB);
  ExpectCode(Create(small), StatusCode::OUT_OF_RANGE, "limit_bytes");
  ExpectCode(Create(FromSnapshot("pvc-limit", kUnknownUuid)), StatusCode::NOT_FOUND, kUnknownUuid);
  csi::v1::CreateVolumeRequest clone_small = FromVolume("pvc-limit-clone", source.volume_id(), 1);
  clone_small.mutable_capacity_range()->set_limit_bytes(kGiB);
  ExpectCode(Create(clone_small), StatusCode::OUT_OF_RANGE, "limit_bytes");
  ExpectCode(Create(FromVolume("pvc-limit-clone", kUnknownUuid)), StatusCode::NOT_FOUND,
             kUnknownUuid);
  EXPECT_EQ(SimSnapshots().size(), 1u);  // no temporary snapshot was taken
}

TEST_F(CsiSnapshotTest, CloneMakesADiskAndLeavesNoTemporarySnapshot) {
  csi::v1::Volume source = MustCreate("pvc-clone-src", 2);
  csi::v1::CreateVolumeResponse clone;
  ASSERT_TRUE(Create(FromVolume("pvc-clone", source.volume_id(), 1), &clone).ok());
  EXPECT_EQ(clone.volume().capacity_bytes(), 2 * kGiB);
  EXPECT_EQ(clone.volume().content_source().volume().volume_id(), source.volume_id());
  nlohmann::json disk = SimDisk(clone.volume().volume_id());
  EXPECT_EQ(disk["state"]["state"], "detached");
  EXPECT_NE(disk["description"].get<std::string>().find("cloned from volume " + source.volume_id()),
            std::string::npos);
  EXPECT_TRUE(SimSnapshots().empty());
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
  EXPECT_EQ(CountSimRequests("DELETE", "snapshot_delete"), 1);
  csi::v1::CreateVolumeResponse again;
  ASSERT_TRUE(Create(FromVolume("pvc-clone", source.volume_id(), 1), &again).ok());
  EXPECT_EQ(again.volume().volume_id(), clone.volume().volume_id());
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
  ExpectCode(Create(CreateRequest("pvc-clone", 2)), StatusCode::ALREADY_EXISTS, "clone of volume");
  // No capacity_range: exactly the source's size (not the plugin's default size).
  csi::v1::CreateVolumeRequest unsized = FromVolume("pvc-clone-unsized", source.volume_id());
  unsized.clear_capacity_range();
  csi::v1::CreateVolumeResponse same_size;
  ASSERT_TRUE(Create(unsized, &same_size).ok());
  EXPECT_EQ(same_size.volume().capacity_bytes(), 2 * kGiB);
  // The source gone, a retry still gets the clone.
  ASSERT_TRUE(Delete(source.volume_id()).ok());
  ASSERT_TRUE(Create(FromVolume("pvc-clone", source.volume_id(), 1), &again).ok());
  EXPECT_EQ(again.volume().volume_id(), clone.volume().volume_id());
  StopPlugin();
  EXPECT_TRUE(Db("SELECT id FROM operations WHERE state = 'pending'").empty());
}

class CsiSnapshotQuotaTest : public CsiSnapshotTest {
 protected:
  // Room for the 1 GiB source and its temporary snapshot, not for the clone's disk.
  std::vector<std::string> sim_args() const override {
    return {"--storage-quota", std::to_string(2 * kGiB)};
  }
};

TEST_F(CsiSnapshotQuotaTest, AFailedCloneDeletesItsTemporarySnapshot) {
  csi::v1::Volume source = MustCreate("pvc-quota-src", 1);
  ExpectCode(Create(FromVolume("pvc-quota-clone", source.volume_id(), 1)),
             StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
  EXPECT_TRUE(SimSnapshots().empty());
  EXPECT_EQ(SimDisksAll().size(), 1u);  // the source only
  StopPlugin();
  EXPECT_TRUE(Db("SELECT id FROM operations WHERE state = 'pending'").empty());
  EXPECT_TRUE(Db("SELECT * FROM volumes WHERE co_name = 'pvc-quota-clone'").empty());
}

// ---- readiness over time, ABORTED, upload tracking across a restart ---------------------------

class SlowCsiSnapshotTest : public CsiSnapshotTest {
 protected:
  // Creates answer at once with `creating` and finish 3 s later.
  std::vector<std::string> sim_args() const override {
    return {"--async", "--create-delay-ms", "3000"};
  }
};

TEST_F(SlowCsiSnapshotTest, ReadinessFlipsFromFalseToTrue) {
  csi::v1::Volume volume = MustCreate("pvc-slow");
  csi::v1::Snapshot early;
  // Answered (OK, not DEADLINE_EXCEEDED) within the call's deadline.
  ASSERT_TRUE(Snap("snap-slow", volume.volume_id(), &early, 1s).ok());
  EXPECT_FALSE(early.ready_to_use());
  EXPECT_FALSE(early.snapshot_id().empty());
  csi::v1::ListSnapshotsResponse listed;
  ASSERT_TRUE(List({}, &listed).ok());
  ASSERT_EQ(listed.entries_size(), 1);
  EXPECT_FALSE(listed.entries(0).snapshot().ready_to_use());
  csi::v1::Snapshot got;
  ASSERT_TRUE(Get(early.snapshot_id(), &got).ok());
  EXPECT_FALSE(got.ready_to_use());
  // Deleting a snapshot Oxide is still creating: ABORTED, retry later.
  ExpectCode(DeleteSnap(early.snapshot_id()), StatusCode::ABORTED, "still being created");
  // With no deadline pressure the call waits for readiness.
  csi::v1::Snapshot ready;
  ASSERT_TRUE(Snap("snap-slow", volume.volume_id(), &ready, 15s).ok());
  EXPECT_TRUE(ready.ready_to_use());
  EXPECT_EQ(ready.snapshot_id(), early.snapshot_id());
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
  ASSERT_TRUE(List({}, &listed).ok());
  EXPECT_TRUE(listed.entries(0).snapshot().ready_to_use());
  ASSERT_TRUE(Get(early.snapshot_id(), &got).ok());
  EXPECT_TRUE(got.ready_to_use());
  StopPlugin();
  auto rows = Db("SELECT state, polls FROM snapshots");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "ready");
  EXPECT_GE(std::stoi(rows[0][1]), 1);
}

TEST_F(SlowCsiSnapshotTest, WhileOxideHoldsTheCreateTheAnswerComesBeforeTheDeadline) {
  // Like the real API: the POST answers only when the snapshot is ready (3 s here).
  ASSERT_EQ(api_->put("/__sim/config", {{"async", false}}).status, 200);
  csi::v1::Volume volume = MustCreate("pvc-held");
  csi::v1::Snapshot early;
  // Answered (OK, not DEADLINE_EXCEEDED) within the call's deadline.
  ASSERT_TRUE(Snap("snap-held", volume.volume_id(), &early, 2s).ok());
  EXPECT_FALSE(early.ready_to_use());
  EXPECT_FALSE(early.snapshot_id().empty());
  EXPECT_EQ(early.source_volume_id(), volume.volume_id());
  // The retry joins the create still in flight and gets the ready snapshot.
  csi::v1::Snapshot ready;
  ASSERT_TRUE(Snap("snap-held", volume.volume_id(), &ready, 15s).ok());
  EXPECT_TRUE(ready.ready_to_use());
  EXPECT_EQ(ready.snapshot_id(), early.snapshot_id());
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 1);
}

TEST_F(SlowCsiSnapshotTest, RestoreFromASnapshotStillCreatingIsUnavailable) {
  csi::v1::Volume volume = MustCreate("pvc-slow-restore");
  csi::v1::Snapshot early;
  ASSERT_TRUE(Snap("snap-slow-restore", volume.volume_id(), &early, 1s).ok());
  ASSERT_FALSE(early.ready_to_use());
  ExpectCode(Create(FromSnapshot("pvc-too-early", early.snapshot_id())), StatusCode::UNAVAILABLE,
             "still being created");
}

TEST_F(SlowCsiSnapshotTest, AnotherCallForASnapshotInFlightIsAborted) {
  csi::v1::Volume a = MustCreate("pvc-busy-a");
  csi::v1::Volume b = MustCreate("pvc-busy-b");
  // The POST answers only once the snapshot is ready (not async): it stays in flight while the
  // snapshot is frozen in the simulator.
  ASSERT_TRUE(api_->put("/__sim/config", {{"async", false}}).status == 200);
  auto first = std::async(std::launch::async, [&] {
    csi::v1::Snapshot snapshot;
    return Snap("snap-busy", a.volume_id(), &snapshot, 20s);
  });
  // The POST reached the simulator: its snapshot is there, creating. Frozen (before its 3 s
  // creation ends), it stays so until released.
  std::string held;
  ASSERT_TRUE(WaitUntil([&] {
    std::vector<nlohmann::json> snapshots = SimSnapshots();
    if (!snapshots.empty()) held = snapshots[0].value("id", "");
    return !held.empty();
  }));
  Control("freeze", {{"kind", "snapshot"}, {"id", held}});
  ASSERT_EQ(SimSnapshots().at(0)["state"], "creating") << "the creation ended before the freeze";
  ExpectCode(Snap("snap-busy", b.volume_id()), StatusCode::ABORTED,
             "operation CreateSnapshot with other arguments pending");
  Control("release", {{"kind", "snapshot"}, {"id", held}});
  EXPECT_TRUE(first.get().ok());
}

TEST_F(SlowCsiSnapshotTest, UploadTrackingResumesAfterASigkill) {
  csi::v1::Volume volume = MustCreate("pvc-track");
  csi::v1::Snapshot early;
  ASSERT_TRUE(Snap("snap-track", volume.volume_id(), &early, 1s).ok());
  ASSERT_FALSE(early.ready_to_use());
  plugin_->Signal(SIGKILL);
  plugin_->WaitExit();
  plugin_.reset();
  ASSERT_EQ(Db("SELECT state FROM snapshots")[0][0], "creating");
  int polls_before =
      CountSimRequests("GET", "snapshot_view") + CountSimRequests("GET", "snapshot_list");
  StartPlugin();
  // No CSI call: the restarted plugin follows the upload by itself.
  EXPECT_TRUE(plugin_->WaitForLog("snapshot upload settled", 10s)) << plugin_->Log();
  EXPECT_GT(CountSimRequests("GET", "snapshot_view") + CountSimRequests("GET", "snapshot_list"),
            polls_before);
  StopPlugin();
  EXPECT_EQ(Db("SELECT state FROM snapshots")[0][0], "ready");
}

TEST_F(SlowCsiSnapshotTest, AKilledCloneLeavesNoTemporarySnapshotAfterTheRestart) {
  csi::v1::Volume source = MustCreate("pvc-kill-src");
  auto pending = std::async(
      std::launch::async, [&] { return Create(FromVolume("pvc-kill-clone", source.volume_id())); });
  // Killed once the temporary snapshot exists in Oxide (creating, for 3 s).
  ASSERT_TRUE(WaitUntil([&] { return !SimSnapshots().empty(); }));
  ASSERT_EQ(SimSnapshots().size(), 1u);
  plugin_->Signal(SIGKILL);
  plugin_->WaitExit();
  pending.get();
  plugin_.reset();
  StartPlugin();
  // The recovery drops the temporary snapshot before it logs the entry reconciled.
  EXPECT_TRUE(plugin_->WaitForLog("reconciled an unfinished operation", 15s)) << plugin_->Log();
  EXPECT_TRUE(WaitUntil([&] { return SimSnapshots().empty(); }, 5s))
      << "temporary snapshot left after recovery: " << plugin_->Log();
  StopPlugin();
  EXPECT_TRUE(Db("SELECT id FROM operations WHERE state = 'pending'").empty());
  StartPlugin();
  // The CO's retry makes the clone (exactly one disk for it).
  csi::v1::CreateVolumeResponse clone;
  grpc::Status retried;
  // ABORTED while an operation on the source is still under way: retried, as a CO does.
  EXPECT_TRUE(WaitUntil(
      [&] {
        retried = Create(FromVolume("pvc-kill-clone", source.volume_id()), &clone);
        return retried.error_code() != StatusCode::ABORTED;
      },
      20s, 50ms));
  ASSERT_TRUE(retried.ok()) << retried.error_message();
  int disks_named = 0;
  for (const auto& disk : SimDisksAll()) {
    if (disk["name"] == clone.volume().volume_context().at("diskName")) ++disks_named;
  }
  EXPECT_EQ(disks_named, 1);
  EXPECT_TRUE(SimSnapshots().empty());
}

// Issue 22 item 5: a snapshot deleted directly in Oxide; CreateSnapshot with the same name takes a
// new one, and the log says so with both ids.
TEST_F(CsiSnapshotTest, ReTakingASnapshotThatVanishedFromOxideLogsBothIds) {
  const csi::v1::Volume volume = MustCreate("pvc-snap-vanished-src");
  const csi::v1::Snapshot first = SnapUntilReady("snap-vanished", volume.volume_id());
  ASSERT_FALSE(first.snapshot_id().empty());
  ASSERT_EQ(api_->del("/v1/snapshots/" + first.snapshot_id()).status, 204);
  const csi::v1::Snapshot second = SnapUntilReady("snap-vanished", volume.volume_id());
  EXPECT_NE(second.snapshot_id(), first.snapshot_id());
  const std::string warning = "re-creating snapshot: its earlier snapshot vanished from Oxide";
  ASSERT_TRUE(plugin_->WaitForLog(warning)) << plugin_->Log();
  const std::string line = LogLineWith(plugin_->Log(), warning);
  EXPECT_NE(line.find("level=warn"), std::string::npos) << line;
  EXPECT_NE(line.find("old_snapshot_id=" + first.snapshot_id()), std::string::npos) << line;
  EXPECT_NE(line.find(" snapshot_id=" + second.snapshot_id()), std::string::npos) << line;
  EXPECT_NE(line.find("snap-vanished"), std::string::npos) << line;
}

}  // namespace
}  // namespace oxide::testing
