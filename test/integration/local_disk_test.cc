// Local (sled-local NVMe) volumes through the real socket against the real simulator: the
// StorageClass parameter diskType, the Oxide disk it makes, the type in volume_context, the
// idempotency check of a repeat, and each Oxide rule the plugin must apply itself or report:
// no blockSize but 4096, no restore or clone into a local volume (refused before Oxide is asked),
// no clone of a local volume, no snapshot of one (Oxide's reason quoted), attach only while the
// instance is stopped, and 409 while it is starting. The end to end with mounts is in
// lifecycle_e2e_test.cc.
#include <gtest/gtest.h>

#include "controller_fixture.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;

class LocalDiskTest : public ControllerTest {
 protected:
  static csi::v1::CreateVolumeRequest LocalRequest(const std::string& name, int64_t gib = 1) {
    csi::v1::CreateVolumeRequest request = CreateRequest(name, gib);
    (*request.mutable_parameters())["diskType"] = "local";
    return request;
  }

  csi::v1::Volume MustCreateLocal(const std::string& name, int64_t gib = 1) {
    csi::v1::CreateVolumeResponse response;
    grpc::Status status = Create(LocalRequest(name, gib), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.volume();
  }

  grpc::Status Snap(const std::string& name, const std::string& source) {
    csi::v1::CreateSnapshotRequest request;
    request.set_name(name);
    request.set_source_volume_id(source);
    csi::v1::CreateSnapshotResponse response;
    return controller_->CreateSnapshot(Call().get(), request, &response);
  }

  // Every disk of project demo, by name.
  std::vector<std::string> SimDiskNames() {
    sim_test::Reply reply = api_->get("/v1/disks?project=demo&limit=1000");
    EXPECT_EQ(reply.status, 200) << reply.body;
    std::vector<std::string> names;
    const nlohmann::json page = reply.json();
    for (const auto& disk : page["items"])
      names.push_back(disk["name"]);
    return names;
  }
};

TEST_F(LocalDiskTest, DiskTypeLocalMakesALocalOxideDiskAndSaysSoInVolumeContext) {
  csi::v1::Volume volume = MustCreateLocal("pvc-local", 2);
  EXPECT_EQ(volume.capacity_bytes(), 2 * kGiB);
  EXPECT_EQ(volume.volume_context().at("diskType"), "local");
  nlohmann::json disk = SimDisk(volume.volume_id());
  ASSERT_FALSE(disk.is_null());
  EXPECT_EQ(disk["disk_type"], "local");
  EXPECT_EQ(disk["block_size"], 4096);
  EXPECT_EQ(disk["state"]["state"], "detached");

  csi::v1::Volume distributed = MustCreate("pvc-distributed");
  EXPECT_EQ(distributed.volume_context().at("diskType"), "distributed");
  EXPECT_EQ(SimDisk(distributed.volume_id())["disk_type"], "distributed");

  csi::v1::ListVolumesResponse listed;
  ASSERT_TRUE(controller_->ListVolumes(Call().get(), {}, &listed).ok());
  ASSERT_EQ(listed.entries_size(), 2);
  for (const auto& entry : listed.entries()) {
    const std::string expected =
        entry.volume().volume_id() == volume.volume_id() ? "local" : "distributed";
    EXPECT_EQ(entry.volume().volume_context().at("diskType"), expected);
  }

  csi::v1::ControllerGetVolumeRequest get;
  get.set_volume_id(volume.volume_id());
  csi::v1::ControllerGetVolumeResponse got;
  ASSERT_TRUE(controller_->ControllerGetVolume(Call().get(), get, &got).ok());
  EXPECT_EQ(got.volume().volume_context().at("diskType"), "local");
}

TEST_F(LocalDiskTest, ARepeatIsIdempotentAndTheOtherTypeUnderTheNameAlreadyExists) {
  csi::v1::Volume first = MustCreateLocal("pvc-local-idem");
  csi::v1::Volume again = MustCreateLocal("pvc-local-idem");
  EXPECT_EQ(first.volume_id(), again.volume_id());
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 1);
  ExpectCode(Create(CreateRequest("pvc-local-idem")), StatusCode::ALREADY_EXISTS,
             "it is a local disk, not distributed");
  csi::v1::CreateVolumeRequest explicit_distributed = CreateRequest("pvc-local-idem");
  (*explicit_distributed.mutable_parameters())["diskType"] = "distributed";
  ExpectCode(Create(explicit_distributed), StatusCode::ALREADY_EXISTS, "not distributed");

  MustCreate("pvc-dist-idem");
  ExpectCode(Create(LocalRequest("pvc-dist-idem")), StatusCode::ALREADY_EXISTS,
             "it is a distributed disk, not local");
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 2);
}

TEST_F(LocalDiskTest, BadDiskTypesAndBlockSizesAreRefusedBeforeOxideIsAsked) {
  csi::v1::CreateVolumeRequest block_size = LocalRequest("pvc-local-bs");
  (*block_size.mutable_parameters())["blockSize"] = "512";
  ExpectCode(Create(block_size), StatusCode::INVALID_ARGUMENT, "blockSize=\"512\"");
  ExpectCode(Create(block_size), StatusCode::INVALID_ARGUMENT, "diskType=\"local\"");
  (*block_size.mutable_parameters())["blockSize"] = "4096";
  csi::v1::CreateVolumeRequest bad_type = CreateRequest("pvc-bad-type");
  (*bad_type.mutable_parameters())["diskType"] = "nvme";
  ExpectCode(Create(bad_type), StatusCode::INVALID_ARGUMENT, "diskType=\"nvme\"");
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 0);
  csi::v1::CreateVolumeResponse made;
  ASSERT_TRUE(Create(block_size, &made).ok());
  EXPECT_EQ(SimDisk(made.volume().volume_id())["block_size"], 4096);
}

TEST_F(LocalDiskTest, ALocalVolumeFromASnapshotOrACloneIsRefusedBeforeAnythingIsCreated) {
  csi::v1::Volume source = MustCreate("pvc-source");
  csi::v1::CreateSnapshotRequest snap_request;
  snap_request.set_name("snap-source");
  snap_request.set_source_volume_id(source.volume_id());
  csi::v1::CreateSnapshotResponse snapshot;
  ASSERT_TRUE(controller_->CreateSnapshot(Call().get(), snap_request, &snapshot).ok());
  const std::vector<std::string> disks_before = SimDiskNames();
  const int requests_before = CountSimRequests("GET", "snapshot_view") +
                              CountSimRequests("GET", "disk_view") +
                              CountSimRequests("POST", "snapshot_create");

  csi::v1::CreateVolumeRequest restore = LocalRequest("pvc-local-restore");
  restore.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(
      snapshot.snapshot().snapshot_id());
  ExpectCode(Create(restore), StatusCode::INVALID_ARGUMENT, "diskType=\"local\"");
  ExpectCode(Create(restore), StatusCode::INVALID_ARGUMENT, "a snapshot to restore");

  csi::v1::CreateVolumeRequest clone = LocalRequest("pvc-local-clone");
  clone.mutable_volume_content_source()->mutable_volume()->set_volume_id(source.volume_id());
  ExpectCode(Create(clone), StatusCode::INVALID_ARGUMENT, "a volume to clone");

  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 1) << "only pvc-source's";
  EXPECT_EQ(CountSimRequests("GET", "snapshot_view") + CountSimRequests("GET", "disk_view") +
                CountSimRequests("POST", "snapshot_create"),
            requests_before)
      << "refused before Oxide was asked anything";
  EXPECT_EQ(SimDiskNames(), disks_before);
}

TEST_F(LocalDiskTest, ALocalVolumeCannotBeClonedNorSnapshotted) {
  csi::v1::Volume local = MustCreateLocal("pvc-local-src");
  csi::v1::CreateVolumeRequest clone = CreateRequest("pvc-clone-of-local");
  clone.mutable_volume_content_source()->mutable_volume()->set_volume_id(local.volume_id());
  ExpectCode(Create(clone), StatusCode::INVALID_ARGUMENT, "is a local disk and cannot be cloned");
  EXPECT_EQ(CountSimRequests("POST", "snapshot_create"), 0) << "no temporary snapshot tried";
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 1);

  for (int attempt = 0; attempt < 2; ++attempt) {  // a retry gets the same answer
    grpc::Status refused = Snap("snap-of-local", local.volume_id());
    ExpectCode(refused, StatusCode::FAILED_PRECONDITION,
               "can't create a snapshot of a local storage disk");  // Oxide's reason, quoted
    ExpectCode(refused, StatusCode::FAILED_PRECONDITION, "diskType local has no snapshots");
  }
  sim_test::Reply snapshots = api_->get("/v1/snapshots?project=demo");
  EXPECT_TRUE(snapshots.json()["items"].empty()) << snapshots.body;
}

TEST_F(LocalDiskTest, PublishAttachesToAStoppedInstanceAndUnpublishDetaches) {
  csi::v1::Volume volume = MustCreateLocal("pvc-local-pub");
  const std::string stopped = Instance("node-stopped", "stopped");
  csi::v1::ControllerPublishVolumeResponse published = MustPublish(volume.volume_id(), stopped);
  EXPECT_EQ(published.publish_context().at("diskName"), volume.volume_context().at("diskName"));
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["instance"], stopped);
  ASSERT_TRUE(Unpublish(volume.volume_id(), stopped).ok());
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");

  const std::string running = Instance("node-running", "running");
  ExpectCode(Publish(volume.volume_id(), running), StatusCode::FAILED_PRECONDITION,
             "not fully stopped");
  ASSERT_TRUE(Delete(volume.volume_id()).ok());
  EXPECT_TRUE(SimDisk(volume.volume_id()).is_null());
}

// With hot-plug modelled, Oxide's own rule for local disks shows: no attach while the instance
// is starting (409), which the CO retries.
class LocalDiskHotplugTest : public LocalDiskTest {
 protected:
  std::vector<std::string> sim_args() const override { return {"--hotplug"}; }
};

TEST_F(LocalDiskHotplugTest, PublishWhileTheInstanceIsStartingIsAbortedWithOxidesReason) {
  csi::v1::Volume volume = MustCreateLocal("pvc-local-starting");
  const std::string starting = Instance("node-starting", "starting");
  ExpectCode(Publish(volume.volume_id(), starting), StatusCode::ABORTED,
             "cannot attach local storage disk: instance is starting");
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");
  ASSERT_EQ(api_->put("/__sim/instances/node-starting", {{"run_state", "stopped"}}).status, 200);
  csi::v1::ControllerPublishVolumeResponse published = MustPublish(volume.volume_id(), starting);
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["instance"], starting);
}

}  // namespace
}  // namespace oxide::testing
