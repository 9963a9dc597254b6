// Every Controller RPC through the real socket against the real simulator: results, idempotency
// and each error the CSI spec and the Oxide rules call for.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <future>

#include "controller_fixture.h"
#include "support/controller_rig.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using grpc::StatusCode;
using Mode = csi::v1::VolumeCapability_AccessMode;

constexpr const char* kUnknownUuid = "00000000-0000-4000-8000-000000000000";

// ---- CreateVolume ---------------------------------------------------------------------------

TEST_F(ControllerTest, CreateVolumeMakesAWholeGibDiskNamedAfterTheCsiName) {
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-create");
  request.mutable_capacity_range()->set_required_bytes(kGiB + kGiB / 2);
  (*request.mutable_parameters())["csi.storage.k8s.io/pvc/name"] = "data";
  (*request.mutable_parameters())["csi.storage.k8s.io/pvc/namespace"] = "db";
  csi::v1::CreateVolumeResponse response;
  ASSERT_TRUE(Create(request, &response).ok());
  const csi::v1::Volume& volume = response.volume();
  EXPECT_EQ(volume.capacity_bytes(), 2 * kGiB);
  std::string disk_name = volume.volume_context().at("diskName");
  EXPECT_EQ(disk_name.substr(0, 4), "csi-");
  ASSERT_EQ(volume.accessible_topology_size(), 1);
  EXPECT_EQ(volume.accessible_topology(0).segments().at("topology.csi.oxide.computer/zone"),
            "default");
  nlohmann::json disk = SimDisk(volume.volume_id());
  ASSERT_FALSE(disk.is_null());
  EXPECT_EQ(disk["name"], disk_name);
  EXPECT_EQ(disk["state"]["state"], "detached");
  EXPECT_EQ(disk["description"], "oxide-csi volume \"pvc-create\" for pvc db/data");
  EXPECT_EQ(disk["block_size"], 4096);
}

TEST_F(ControllerTest, CreateVolumeIsIdempotentAndRefusesIncompatibleRepeats) {
  csi::v1::Volume first = MustCreate("pvc-idem", 3);
  csi::v1::Volume again = MustCreate("pvc-idem", 3);
  EXPECT_EQ(first.volume_id(), again.volume_id());
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 1);
  ExpectCode(Create(CreateRequest("pvc-idem", 5)), StatusCode::ALREADY_EXISTS, "required 5 GiB");
  csi::v1::CreateVolumeRequest block_size = CreateRequest("pvc-idem", 3);
  (*block_size.mutable_parameters())["blockSize"] = "512";
  ExpectCode(Create(block_size), StatusCode::ALREADY_EXISTS, "block size");
}

TEST_F(ControllerTest, CreateVolumeDefaultsTo10GibAndHonoursBlockSize) {
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-default");
  request.clear_capacity_range();
  (*request.mutable_parameters())["blockSize"] = "512";
  csi::v1::CreateVolumeResponse response;
  ASSERT_TRUE(Create(request, &response).ok());
  EXPECT_EQ(response.volume().capacity_bytes(), 10 * kGiB);
  EXPECT_EQ(SimDisk(response.volume().volume_id())["block_size"], 512);
}

TEST_F(ControllerTest, AnEncryptedVolumeTellsTheNodeInVolumeContextAndItsCopiesToo) {
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-encrypted");
  (*request.mutable_parameters())["encrypted"] = "true";
  csi::v1::CreateVolumeResponse response;
  ASSERT_TRUE(Create(request, &response).ok());
  EXPECT_EQ(response.volume().volume_context().at("encrypted"), "true");
  // Oxide sees an ordinary disk: the node encrypts it.
  EXPECT_EQ(SimDisk(response.volume().volume_id())["state"]["state"], "detached");

  csi::v1::CreateVolumeRequest plain = CreateRequest("pvc-plain");
  (*plain.mutable_parameters())["encrypted"] = "false";
  csi::v1::CreateVolumeResponse plain_response;
  ASSERT_TRUE(Create(plain, &plain_response).ok());
  EXPECT_EQ(plain_response.volume().volume_context().count("encrypted"), 0U);

  // A clone copies the LUKS header with the data: its class says encrypted, and the node opens it
  // with the same passphrase.
  csi::v1::CreateVolumeRequest clone = CreateRequest("pvc-encrypted-clone");
  (*clone.mutable_parameters())["encrypted"] = "true";
  clone.mutable_volume_content_source()->mutable_volume()->set_volume_id(
      response.volume().volume_id());
  csi::v1::CreateVolumeResponse clone_response;
  grpc::Status cloned = Create(clone, &clone_response);
  ASSERT_TRUE(cloned.ok()) << cloned.error_message();
  EXPECT_EQ(clone_response.volume().volume_context().at("encrypted"), "true");

  csi::v1::CreateVolumeRequest odd = CreateRequest("pvc-odd");
  (*odd.mutable_parameters())["encrypted"] = "yes";
  ExpectCode(Create(odd), StatusCode::INVALID_ARGUMENT, "encrypted=\"yes\"");
}

TEST_F(ControllerTest, CreateVolumeRejectsBadRequestsWithActionableMessages) {
  csi::v1::CreateVolumeRequest no_name = CreateRequest("");
  ExpectCode(Create(no_name), StatusCode::INVALID_ARGUMENT, "name is required");

  csi::v1::CreateVolumeRequest no_caps = CreateRequest("pvc-bad");
  no_caps.clear_volume_capabilities();
  ExpectCode(Create(no_caps), StatusCode::INVALID_ARGUMENT, "volume_capabilities");

  csi::v1::CreateVolumeRequest multi = CreateRequest("pvc-bad");
  *multi.add_volume_capabilities() = MountCapability(Mode::MULTI_NODE_MULTI_WRITER);
  ExpectCode(Create(multi), StatusCode::INVALID_ARGUMENT, "one instance");

  csi::v1::CreateVolumeRequest fs = CreateRequest("pvc-bad");
  fs.mutable_volume_capabilities(0)->mutable_mount()->set_fs_type("ntfs");
  ExpectCode(Create(fs), StatusCode::INVALID_ARGUMENT, "ntfs");

  csi::v1::CreateVolumeRequest param = CreateRequest("pvc-bad");
  (*param.mutable_parameters())["iops"] = "9000";
  ExpectCode(Create(param), StatusCode::INVALID_ARGUMENT, "blockSize");

  csi::v1::CreateVolumeRequest block = CreateRequest("pvc-bad");
  (*block.mutable_parameters())["blockSize"] = "1024";
  ExpectCode(Create(block), StatusCode::INVALID_ARGUMENT, "512, 2048 or 4096");

  csi::v1::CreateVolumeRequest source = CreateRequest("pvc-bad");
  source.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id("snap");
  ExpectCode(Create(source), StatusCode::NOT_FOUND, "snapshot snap");
  source.mutable_volume_content_source()->mutable_snapshot()->clear_snapshot_id();
  ExpectCode(Create(source), StatusCode::INVALID_ARGUMENT, "snapshot_id is required");
  source.mutable_volume_content_source()->Clear();
  ExpectCode(Create(source), StatusCode::INVALID_ARGUMENT, "neither a snapshot nor a volume");

  csi::v1::CreateVolumeRequest tiny = CreateRequest("pvc-bad");
  tiny.mutable_capacity_range()->set_required_bytes(0);
  tiny.mutable_capacity_range()->set_limit_bytes(kGiB / 2);
  ExpectCode(Create(tiny), StatusCode::OUT_OF_RANGE, "1 GiB");

  ExpectCode(Create(CreateRequest("pvc-bad", 2000)), StatusCode::OUT_OF_RANGE, "1023 GiB");

  csi::v1::CreateVolumeRequest inverted = CreateRequest("pvc-bad", 5);
  inverted.mutable_capacity_range()->set_limit_bytes(kGiB);
  ExpectCode(Create(inverted), StatusCode::INVALID_ARGUMENT, "limit_bytes");

  csi::v1::CreateVolumeRequest zone = CreateRequest("pvc-bad");
  (*zone.mutable_accessibility_requirements()
        ->add_requisite()
        ->mutable_segments())["topology.csi.oxide.computer/zone"] = "elsewhere";
  ExpectCode(Create(zone), StatusCode::RESOURCE_EXHAUSTED, "zone");

  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 0) << "nothing bad reached Oxide";
}

TEST_F(ControllerTest, CreateVolumeAcceptsItsOwnZoneAndReportsQuota) {
  csi::v1::CreateVolumeRequest zone = CreateRequest("pvc-zone");
  (*zone.mutable_accessibility_requirements()
        ->add_requisite()
        ->mutable_segments())["topology.csi.oxide.computer/zone"] = "default";
  EXPECT_TRUE(Create(zone).ok());
  api_->put("/__sim/config", {{"storage_quota", 4 * kGiB}});
  ExpectCode(Create(CreateRequest("pvc-quota", 8)), StatusCode::RESOURCE_EXHAUSTED);
}

// ---- DeleteVolume ---------------------------------------------------------------------------

TEST_F(ControllerTest, DeleteVolumeIsIdempotentAndRefusesAttachedDisks) {
  std::string node = Instance("node-del");
  csi::v1::Volume volume = MustCreate("pvc-del");
  MustPublish(volume.volume_id(), node);
  ExpectCode(Delete(volume.volume_id()), StatusCode::FAILED_PRECONDITION, "detach it first");
  ASSERT_TRUE(Unpublish(volume.volume_id(), node).ok());
  ASSERT_TRUE(Delete(volume.volume_id()).ok());
  EXPECT_TRUE(SimDisk(volume.volume_id()).is_null());
  EXPECT_TRUE(Delete(volume.volume_id()).ok());
  EXPECT_TRUE(Delete(kUnknownUuid).ok());
  EXPECT_TRUE(Delete("not-a-volume-id").ok());
  ExpectCode(Delete(""), StatusCode::INVALID_ARGUMENT, "volume_id is required");
}

// ---- ControllerPublishVolume / ControllerUnpublishVolume ------------------------------------

TEST_F(ControllerTest, PublishAttachesAndTellsTheNodeHowToFindTheDevice) {
  std::string node = Instance("node-pub");
  csi::v1::Volume volume = MustCreate("pvc-pub");
  auto response = MustPublish(volume.volume_id(), node);
  std::string disk_name = volume.volume_context().at("diskName");
  EXPECT_EQ(response.publish_context().at("diskName"), disk_name);
  EXPECT_EQ(response.publish_context().at("nvmeSerial"), disk_name.substr(0, 20));
  nlohmann::json disk = SimDisk(volume.volume_id());
  EXPECT_EQ(disk["state"]["state"], "attached");
  EXPECT_EQ(disk["state"]["instance"], node);
  EXPECT_EQ(response.publish_context().at("diskSizeBytes"),
            std::to_string(disk["size"].get<uint64_t>()));
  EXPECT_EQ(response.publish_context().at("diskSizeBytes"),
            std::to_string(volume.capacity_bytes()));
  auto again = MustPublish(volume.volume_id(), node);
  EXPECT_EQ(again.publish_context().at("diskName"), disk_name);
  EXPECT_EQ(again.publish_context().at("diskSizeBytes"),
            response.publish_context().at("diskSizeBytes"));
}

TEST_F(ControllerTest, PublishErrors) {
  std::string node = Instance("node-a");
  std::string other = Instance("node-b");
  std::string running = Instance("node-running", "running");
  csi::v1::Volume volume = MustCreate("pvc-puberr");
  ExpectCode(Publish(kUnknownUuid, node), StatusCode::NOT_FOUND, "does not exist");
  ExpectCode(Publish("vol-x", node), StatusCode::NOT_FOUND, "UUID");
  ExpectCode(Publish(volume.volume_id(), kUnknownUuid), StatusCode::NOT_FOUND, "instance");
  ExpectCode(Publish(volume.volume_id(), "node-x"), StatusCode::NOT_FOUND, "instance id");
  ExpectCode(Publish(volume.volume_id(), running), StatusCode::FAILED_PRECONDITION, "stopped");
  ExpectCode(Publish("", node), StatusCode::INVALID_ARGUMENT, "volume_id");
  ExpectCode(Publish(volume.volume_id(), ""), StatusCode::INVALID_ARGUMENT, "node_id");

  csi::v1::ControllerPublishVolumeRequest multi;
  multi.set_volume_id(volume.volume_id());
  multi.set_node_id(node);
  *multi.mutable_volume_capability() = MountCapability(Mode::MULTI_NODE_READER_ONLY);
  csi::v1::ControllerPublishVolumeResponse ignored;
  ExpectCode(controller_->ControllerPublishVolume(Call().get(), multi, &ignored),
             StatusCode::INVALID_ARGUMENT, "one instance");
  multi.clear_volume_capability();
  ExpectCode(controller_->ControllerPublishVolume(Call().get(), multi, &ignored),
             StatusCode::INVALID_ARGUMENT, "volume_capability");

  MustPublish(volume.volume_id(), node);
  ExpectCode(Publish(volume.volume_id(), other), StatusCode::FAILED_PRECONDITION,
             "attached to another instance");
}

TEST_F(ControllerTest, PublishingAThirteenthDiskIsResourceExhausted) {
  std::string node = Instance("node-full");
  for (int i = 0; i < 12; ++i) {
    MustPublish(MustCreate("pvc-full-" + std::to_string(i)).volume_id(), node);
  }
  ExpectCode(Publish(MustCreate("pvc-full-12").volume_id(), node), StatusCode::RESOURCE_EXHAUSTED,
             "12 disks");
}

TEST_F(ControllerTest, UnpublishIsIdempotentAndFindsTheHolderWithoutANode) {
  std::string node = Instance("node-unpub");
  std::string other = Instance("node-other");
  csi::v1::Volume volume = MustCreate("pvc-unpub");
  MustPublish(volume.volume_id(), node);
  EXPECT_TRUE(Unpublish(volume.volume_id(), other).ok()) << "not attached there: nothing to do";
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["instance"], node);
  ASSERT_TRUE(Unpublish(volume.volume_id(), "").ok());
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");
  EXPECT_TRUE(Unpublish(volume.volume_id(), node).ok());
  EXPECT_TRUE(Unpublish(kUnknownUuid, node).ok());
  EXPECT_TRUE(Unpublish(volume.volume_id(), "node-x").ok());
  ExpectCode(Unpublish("", node), StatusCode::INVALID_ARGUMENT, "volume_id");
}

// ---- read-only RPCs -------------------------------------------------------------------------

TEST_F(ControllerTest, ValidateVolumeCapabilities) {
  csi::v1::Volume volume = MustCreate("pvc-validate");
  csi::v1::ValidateVolumeCapabilitiesRequest request;
  request.set_volume_id(volume.volume_id());
  *request.add_volume_capabilities() = MountCapability();
  csi::v1::ValidateVolumeCapabilitiesResponse response;
  ASSERT_TRUE(controller_->ValidateVolumeCapabilities(Call().get(), request, &response).ok());
  ASSERT_TRUE(response.has_confirmed());
  EXPECT_EQ(response.confirmed().volume_capabilities_size(), 1);

  *request.add_volume_capabilities() = MountCapability(Mode::MULTI_NODE_MULTI_WRITER);
  response.Clear();
  ASSERT_TRUE(controller_->ValidateVolumeCapabilities(Call().get(), request, &response).ok());
  EXPECT_FALSE(response.has_confirmed());
  EXPECT_NE(response.message().find("one instance"), std::string::npos);

  request.set_volume_id(kUnknownUuid);
  ExpectCode(controller_->ValidateVolumeCapabilities(Call().get(), request, &response),
             StatusCode::NOT_FOUND);
  request.set_volume_id(volume.volume_id());
  request.clear_volume_capabilities();
  ExpectCode(controller_->ValidateVolumeCapabilities(Call().get(), request, &response),
             StatusCode::INVALID_ARGUMENT, "volume_capabilities");
}

TEST_F(ControllerTest, ListVolumesPagesThroughThePluginsVolumesWithPublishedNodes) {
  std::string node = Instance("node-list");
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.insert(MustCreate("pvc-list-" + std::to_string(i)).volume_id());
  MustPublish(*ids.begin(), node);
  // A disk the plugin did not make is not a CSI volume.
  ASSERT_EQ(api_->post("/v1/disks?project=demo",
                       {{"name", "boot-disk"},
                        {"description", "x"},
                        {"size", kGiB},
                        {"disk_backend",
                         {{"type", "distributed"},
                          {"disk_source", {{"type", "blank"}, {"block_size", 4096}}}}}})
                .status,
            201);

  std::set<std::string> listed;
  std::string token;
  int pages = 0;
  do {
    csi::v1::ListVolumesRequest request;
    request.set_max_entries(2);
    request.set_starting_token(token);
    csi::v1::ListVolumesResponse response;
    ASSERT_TRUE(controller_->ListVolumes(Call().get(), request, &response).ok());
    EXPECT_LE(response.entries_size(), 2);
    for (const auto& entry : response.entries()) {
      listed.insert(entry.volume().volume_id());
      bool published = entry.volume().volume_id() == *ids.begin();
      // Both forms of the node's id: the CO may know it by either (node_instances.h).
      ASSERT_EQ(entry.status().published_node_ids_size(), published ? 2 : 0);
      if (published) {
        EXPECT_EQ(entry.status().published_node_ids(0), node);
        EXPECT_EQ(entry.status().published_node_ids(1), "name:node-list");
      }
      EXPECT_FALSE(entry.status().volume_condition().abnormal());
    }
    token = response.next_token();
    ASSERT_LT(++pages, 10);
  } while (!token.empty());
  EXPECT_EQ(listed, ids);

  csi::v1::ListVolumesRequest all;
  csi::v1::ListVolumesResponse everything;
  ASSERT_TRUE(controller_->ListVolumes(Call().get(), all, &everything).ok());
  EXPECT_EQ(everything.entries_size(), 5);
  EXPECT_TRUE(everything.next_token().empty());

  csi::v1::ListVolumesRequest bad;
  bad.set_starting_token("garbage");
  ExpectCode(controller_->ListVolumes(Call().get(), bad, &everything), StatusCode::ABORTED,
             "starting_token");
  bad.set_starting_token("ox1.garbage");
  ExpectCode(controller_->ListVolumes(Call().get(), bad, &everything), StatusCode::ABORTED,
             "starting_token");
}

TEST_F(ControllerTest, ControllerGetVolumeReportsNodesAndAFaultedDisk) {
  std::string node = Instance("node-get");
  csi::v1::Volume volume = MustCreate("pvc-get");
  MustPublish(volume.volume_id(), node);
  csi::v1::ControllerGetVolumeRequest request;
  request.set_volume_id(volume.volume_id());
  csi::v1::ControllerGetVolumeResponse response;
  ASSERT_TRUE(controller_->ControllerGetVolume(Call().get(), request, &response).ok());
  EXPECT_EQ(response.volume().capacity_bytes(), kGiB);
  ASSERT_EQ(response.status().published_node_ids_size(), 2);
  EXPECT_EQ(response.status().published_node_ids(0), node);
  EXPECT_EQ(response.status().published_node_ids(1), "name:node-get");
  EXPECT_FALSE(response.status().volume_condition().abnormal());

  ASSERT_TRUE(Unpublish(volume.volume_id(), node).ok());
  ASSERT_EQ(api_->post("/__sim/fault", {{"kind", "disk"}, {"id", volume.volume_id()}}).status, 200);
  ASSERT_TRUE(controller_->ControllerGetVolume(Call().get(), request, &response).ok());
  EXPECT_TRUE(response.status().volume_condition().abnormal());
  EXPECT_NE(response.status().volume_condition().message().find("faulted"), std::string::npos);

  request.set_volume_id(kUnknownUuid);
  ExpectCode(controller_->ControllerGetVolume(Call().get(), request, &response),
             StatusCode::NOT_FOUND);
}

// A node whose Kubernetes Node has no providerID is "name:<instance name>"
// (node/instance_identity.h): the controller looks the instance up in the project and attaches to
// it.
TEST_F(ControllerTest, PublishAndUnpublishByInstanceName) {
  std::string node = Instance("worker-by-name");
  csi::v1::Volume volume = MustCreate("pvc-by-name");
  csi::v1::ControllerPublishVolumeResponse published =
      MustPublish(volume.volume_id(), "name:worker-by-name");
  EXPECT_FALSE(published.publish_context().at("diskName").empty());
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "attached");
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["instance"], node);
  EXPECT_GE(CountSimRequests("GET", "instance_view"), 1);
  // A retry by name joins/answers the same; the listing names the node both ways.
  EXPECT_TRUE(Publish(volume.volume_id(), "name:worker-by-name").ok());
  csi::v1::ControllerGetVolumeRequest get;
  get.set_volume_id(volume.volume_id());
  csi::v1::ControllerGetVolumeResponse got;
  ASSERT_TRUE(controller_->ControllerGetVolume(Call().get(), get, &got).ok());
  ASSERT_EQ(got.status().published_node_ids_size(), 2);
  EXPECT_EQ(got.status().published_node_ids(0), node);
  EXPECT_EQ(got.status().published_node_ids(1), "name:worker-by-name");

  ASSERT_TRUE(Unpublish(volume.volume_id(), "name:worker-by-name").ok());
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");
}

TEST_F(ControllerTest, PublishToAnUnknownInstanceNameIsNotFoundNamingIt) {
  Instance("worker-known");
  csi::v1::Volume volume = MustCreate("pvc-unknown-name");
  ExpectCode(Publish(volume.volume_id(), "name:worker-gone"), StatusCode::NOT_FOUND,
             "there is no instance named worker-gone");
  ExpectCode(Publish(volume.volume_id(), "name:worker-gone"), StatusCode::NOT_FOUND,
             "node name:worker-gone does not exist");
  // Not an Oxide name: no such node, and Oxide is not asked.
  ExpectCode(Publish(volume.volume_id(), "name:Worker_1"), StatusCode::NOT_FOUND,
             "name:<instance name>");
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");
  // Unpublishing from a node that does not exist: the volume is not published there.
  EXPECT_TRUE(Unpublish(volume.volume_id(), "name:worker-gone").ok());
  EXPECT_TRUE(Unpublish(volume.volume_id(), "name:Worker_1").ok());
}

TEST_F(ControllerTest, GetCapacityIsQuotaMinusProvisioned) {
  api_->put("/__sim/config", {{"storage_quota", 100 * kGiB}});
  MustCreate("pvc-cap", 30);
  csi::v1::GetCapacityRequest request;
  csi::v1::GetCapacityResponse response;
  ASSERT_TRUE(controller_->GetCapacity(Call().get(), request, &response).ok());
  EXPECT_EQ(response.available_capacity(), 70 * kGiB);
  EXPECT_EQ(response.maximum_volume_size().value(), 70 * kGiB);
  EXPECT_EQ(response.minimum_volume_size().value(), kGiB);

  (*request.mutable_accessible_topology()->mutable_segments())["topology.csi.oxide.computer/zone"] =
      "elsewhere";
  ASSERT_TRUE(controller_->GetCapacity(Call().get(), request, &response).ok());
  EXPECT_EQ(response.available_capacity(), 0);
  request.clear_accessible_topology();
  (*request.mutable_parameters())["bogus"] = "1";
  ExpectCode(controller_->GetCapacity(Call().get(), request, &response),
             StatusCode::INVALID_ARGUMENT, "bogus");
}

TEST_F(ControllerTest, ControllerGetCapabilitiesListsWhatIsImplemented) {
  csi::v1::ControllerGetCapabilitiesResponse response;
  ASSERT_TRUE(controller_->ControllerGetCapabilities(Call().get(), {}, &response).ok());
  std::set<int> types;
  for (const auto& capability : response.capabilities())
    types.insert(capability.rpc().type());
  using Rpc = csi::v1::ControllerServiceCapability::RPC;
  EXPECT_EQ(types, (std::set<int>{Rpc::CREATE_DELETE_VOLUME, Rpc::PUBLISH_UNPUBLISH_VOLUME,
                                  Rpc::LIST_VOLUMES, Rpc::LIST_VOLUMES_PUBLISHED_NODES,
                                  Rpc::GET_VOLUME, Rpc::VOLUME_CONDITION, Rpc::GET_CAPACITY,
                                  Rpc::SINGLE_NODE_MULTI_WRITER, Rpc::CREATE_DELETE_SNAPSHOT,
                                  Rpc::LIST_SNAPSHOTS, Rpc::GET_SNAPSHOT, Rpc::CLONE_VOLUME}));
  csi::v1::ControllerExpandVolumeResponse expand;
  ExpectCode(controller_->ControllerExpandVolume(Call().get(), {}, &expand),
             StatusCode::UNIMPLEMENTED);
}

// ---- operations in flight, deadlines, restarts ----------------------------------------------

class SlowAttachTest : public ControllerTest {
 protected:
  std::vector<std::string> sim_args() const override {
    return {"--fault", "instance_disk_attach:latency_ms=1500"};
  }
};

TEST_F(SlowAttachTest, AnotherCallOnABusyVolumeIsAbortedAndAnIdenticalOneJoins) {
  std::string node = Instance("node-busy");
  csi::v1::Volume volume = MustCreate("pvc-busy");
  auto first = std::async(std::launch::async, [&] { return Publish(volume.volume_id(), node); });
  // In flight: the simulator has done the attach and holds its answer for 1.5 s (a latency
  // fault; the simulator cannot hold an attach until released: its freeze only parks timed
  // transitions), while the calls below are made.
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("POST", "instance_disk_attach") == 1; },
                        std::chrono::seconds(10)));
  ExpectCode(Unpublish(volume.volume_id(), node), StatusCode::ABORTED,
             "operation ControllerPublishVolume pending for volume " + volume.volume_id());
  ExpectCode(Delete(volume.volume_id()), StatusCode::ABORTED, "pending");
  grpc::Status joined = Publish(volume.volume_id(), node);
  EXPECT_TRUE(joined.ok()) << joined.error_message();
  EXPECT_TRUE(first.get().ok());
  EXPECT_EQ(CountSimRequests("POST", "instance_disk_attach"), 1) << "the identical retry joined";
}

// Ids are canonical before the operation tracker sees them: the same volume in capitals is the
// same volume, busy with the publish in flight.
class SlowAttachDebugLogTest : public SlowAttachTest {
 protected:
  std::vector<std::string> plugin_args() const override { return {"--log-level=debug"}; }
};

TEST_F(SlowAttachDebugLogTest, AnIdInCapitalsIsTheSameVolumeAndIsAbortedWhileBusy) {
  std::string node = Instance("node-case");
  csi::v1::Volume volume = MustCreate("pvc-case");
  std::string upper = volume.volume_id();
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  std::string upper_node = node;
  std::transform(upper_node.begin(), upper_node.end(), upper_node.begin(), ::toupper);
  auto first = std::async(std::launch::async, [&] { return Publish(volume.volume_id(), node); });
  // The publish's handler runs in the loop turn that logs its request; the attach then takes
  // 1.5 s in the simulator.
  ASSERT_TRUE(plugin_->WaitForLog("msg=\"rpc request\" method=ControllerPublishVolume",
                                  std::chrono::seconds(10)));
  ExpectCode(Unpublish(upper, upper_node), StatusCode::ABORTED,
             "operation ControllerPublishVolume pending for volume " + volume.volume_id());
  ExpectCode(Delete(upper), StatusCode::ABORTED, "pending");
  ASSERT_TRUE(first.get().ok());
  // Unpublish in capitals then detaches it, as the lowercase id would.
  ASSERT_TRUE(Unpublish(upper, upper_node).ok());
  EXPECT_TRUE(SimDisk(volume.volume_id())["state"]["instance"].is_null() ||
              SimDisk(volume.volume_id())["state"]["instance"] == "")
      << SimDisk(volume.volume_id()).dump();
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["state"], "detached");
}

TEST_F(SlowAttachTest, AnOperationOutlivesItsDeadlineAndTheRetryGetsItsResult) {
  std::string node = Instance("node-late");
  csi::v1::Volume volume = MustCreate("pvc-late");
  csi::v1::ControllerPublishVolumeRequest request;
  request.set_volume_id(volume.volume_id());
  request.set_node_id(node);
  *request.mutable_volume_capability() = MountCapability();
  csi::v1::ControllerPublishVolumeResponse response;
  ExpectCode(controller_->ControllerPublishVolume(Call(std::chrono::milliseconds(300)).get(),
                                                  request, &response),
             StatusCode::DEADLINE_EXCEEDED);
  // The retry joins the attach still running; it finishes once.
  ASSERT_TRUE(controller_->ControllerPublishVolume(Call().get(), request, &response).ok());
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["instance"], node);
  EXPECT_EQ(CountSimRequests("POST", "instance_disk_attach"), 1);
}

TEST_F(SlowAttachTest, AKilledPluginReconcilesItsJournalAtTheNextStart) {
  std::string node = Instance("node-crash");
  csi::v1::Volume volume = MustCreate("pvc-crash");
  auto pending = std::async(std::launch::async, [&] { return Publish(volume.volume_id(), node); });
  // Killed once the attach reached the simulator (its answer held there for 1.5 s): the
  // publish is open in the journal and the disk is attached in Oxide.
  ASSERT_TRUE(WaitUntil([&] { return CountSimRequests("POST", "instance_disk_attach") == 1; },
                        std::chrono::seconds(10)));
  plugin_->Signal(SIGKILL);
  plugin_->WaitExit();
  pending.get();
  plugin_.reset();
  ASSERT_EQ(SimDisk(volume.volume_id())["state"]["instance"], node) << "the attach landed";
  StartPlugin();
  grpc::Status retried;
  // ABORTED while reconciling: retried, as a CO does, until the reconciliation is over.
  EXPECT_TRUE(WaitUntil(
      [&] {
        retried = Publish(volume.volume_id(), node);
        return retried.error_code() != StatusCode::ABORTED;
      },
      std::chrono::seconds(15), std::chrono::milliseconds(50)));
  ASSERT_TRUE(retried.ok()) << retried.error_message();
  StopPlugin();
  EXPECT_NE(ReadFile(setup_->log_path()).find("reconciled an unfinished operation"),
            std::string::npos);
  EXPECT_EQ(SimDisk(volume.volume_id())["state"]["instance"], node);
}

}  // namespace
}  // namespace oxide::testing

namespace oxide::testing {
namespace {

class WrongTokenTest : public ControllerTest {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<sim_test::SimProcess>();
    api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
    setup_ = std::make_unique<PluginSetup>("controller");
    setup_->env["OXIDE_HOST"] = sim_->base_url();
    setup_->env["OXIDE_TOKEN"] = "oxide-token-revoked-0000";
    setup_->env["OXIDE_PROJECT"] = "demo";
    setup_->args.push_back("--oxide-insecure");
    StartPlugin();
  }
};

// Probe stays ready (issue 34: a refused token is an operator's to fix, shown by the gauge
// oxide_csi_oxide_token_valid and an error record, not a reason to unready or restart the plugin).
TEST_F(WrongTokenTest, ProbeStaysReadyWhileOxideRejectsTheTokenAndCallsSayWhy) {
  ExpectCode(ProbeAfterLogged("Oxide rejects the API token"), StatusCode::OK);
  ExpectCode(Create(CreateRequest("pvc-token")), StatusCode::UNAUTHENTICATED, "token");
  EXPECT_EQ(plugin_->Log().find("oxide-token-revoked-0000"), std::string::npos);
}

class MissingProjectTest : public ControllerTest {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<sim_test::SimProcess>();
    api_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
    setup_ = std::make_unique<PluginSetup>("controller");
    setup_->env["OXIDE_HOST"] = sim_->base_url();
    setup_->env["OXIDE_TOKEN"] = sim_test::SimProcess::kToken;
    setup_->env["OXIDE_PROJECT"] = "no-such-project";
    setup_->args.push_back("--oxide-insecure");
    StartPlugin();
  }
};

// The provisioner treats NOT_FOUND from CreateVolume as final (the spec keeps it for a missing
// content source); a project that is not there is a setting to fix, and the calls say so (Probe
// stays ready: the gauge oxide_csi_oxide_project_found and an error record tell the operator).
TEST_F(MissingProjectTest, CallsAnswerFailedPreconditionNamingTheProjectAndTheSetting) {
  const std::vector<std::string> parts = {"project \"no-such-project\"", "--oxide-project",
                                          "OXIDE_PROJECT"};
  for (const std::string& part : parts) {
    ExpectCode(Create(CreateRequest("pvc-nowhere")), StatusCode::FAILED_PRECONDITION, part);
  }
  csi::v1::ListVolumesResponse listed;
  ExpectCode(controller_->ListVolumes(Call().get(), {}, &listed), StatusCode::FAILED_PRECONDITION,
             "project \"no-such-project\"");
  csi::v1::ListSnapshotsResponse snapshots;
  ExpectCode(controller_->ListSnapshots(Call().get(), {}, &snapshots),
             StatusCode::FAILED_PRECONDITION, "project \"no-such-project\"");
  // Every other call that reaches Oxide, with ids of objects that do exist in another project.
  ASSERT_EQ(api_->post("/__sim/projects", {{"name", "other"}}).status, 201);
  sim_test::Reply disk = api_->post("/v1/disks?project=other", sim_test::blank_disk("theirs"));
  ASSERT_EQ(disk.status, 201) << disk.body;
  const std::string volume = disk.json()["id"];
  sim_test::Reply snap =
      api_->post("/v1/snapshots?project=other",
                 {{"name", "their-snap"}, {"description", ""}, {"disk", volume}});
  ASSERT_EQ(snap.status, 201) << snap.body;
  const std::string snapshot = snap.json()["id"];
  const std::string node = Instance("node-elsewhere");
  const std::string want = "project \"no-such-project\"";
  csi::v1::CreateSnapshotRequest take;
  take.set_name("snap-nowhere");
  take.set_source_volume_id(volume);
  csi::v1::CreateSnapshotResponse taken;
  ExpectCode(controller_->CreateSnapshot(Call().get(), take, &taken),
             StatusCode::FAILED_PRECONDITION, want);
  csi::v1::GetSnapshotRequest get;
  get.set_snapshot_id(snapshot);
  csi::v1::GetSnapshotResponse got;
  ExpectCode(controller_->GetSnapshot(Call().get(), get, &got), StatusCode::FAILED_PRECONDITION,
             want);
  csi::v1::DeleteSnapshotRequest drop;
  drop.set_snapshot_id(snapshot);
  csi::v1::DeleteSnapshotResponse dropped;
  ExpectCode(controller_->DeleteSnapshot(Call().get(), drop, &dropped),
             StatusCode::FAILED_PRECONDITION, want);
  ExpectCode(Publish(volume, node), StatusCode::FAILED_PRECONDITION, want);
  ExpectCode(Unpublish(volume, node), StatusCode::FAILED_PRECONDITION, want);
  ExpectCode(Delete(volume), StatusCode::FAILED_PRECONDITION, want);
  csi::v1::ControllerGetVolumeRequest look;
  look.set_volume_id(volume);
  csi::v1::ControllerGetVolumeResponse looked;
  ExpectCode(controller_->ControllerGetVolume(Call().get(), look, &looked),
             StatusCode::FAILED_PRECONDITION, want);
  csi::v1::CreateVolumeRequest restore = CreateRequest("pvc-restore-nowhere");
  restore.mutable_volume_content_source()->mutable_snapshot()->set_snapshot_id(snapshot);
  ExpectCode(Create(restore), StatusCode::FAILED_PRECONDITION, want);
  EXPECT_EQ(api_->get("/v1/disks/" + volume).status, 200) << "another project's disk was deleted";
  EXPECT_EQ(api_->get("/v1/snapshots/" + snapshot).status, 200);

  ExpectCode(ProbeAfterLogged("the Oxide project is missing"), StatusCode::OK);
}

class DebugLogTest : public ControllerTest {
 protected:
  std::vector<std::string> plugin_args() const override { return {"--log-level=debug"}; }
};

TEST_F(DebugLogTest, CsiSecretsOfControllerCallsNeverReachTheLog) {
  csi::v1::CreateVolumeRequest request = CreateRequest("pvc-secret");
  (*request.mutable_secrets())["password"] = "hunter2-controller-secret";
  csi::v1::CreateVolumeResponse response;
  ASSERT_TRUE(Create(request, &response).ok());
  csi::v1::DeleteVolumeRequest remove;
  remove.set_volume_id(response.volume().volume_id());
  (*remove.mutable_secrets())["password"] = "hunter2-controller-secret";
  csi::v1::DeleteVolumeResponse removed;
  ASSERT_TRUE(controller_->DeleteVolume(Call().get(), remove, &removed).ok());
  std::string log = plugin_->Log();
  EXPECT_NE(log.find("pvc-secret"), std::string::npos) << "debug logging is on";
  EXPECT_EQ(log.find("hunter2-controller-secret"), std::string::npos);
  EXPECT_NE(log.find("[REDACTED]"), std::string::npos);
}

}  // namespace
}  // namespace oxide::testing

namespace oxide::testing {
namespace {

TEST_F(ControllerTest, AFreshReplicaWithAnEmptyDatabaseFindsTheSameVolumes) {
  std::string node = Instance("node-fresh");
  csi::v1::Volume volume = MustCreate("pvc-fresh", 2);
  MustPublish(volume.volume_id(), node);
  StopPlugin();
  std::filesystem::remove_all(std::filesystem::path(setup_->state_db()).parent_path());
  StartPlugin();  // another replica: nothing recorded
  csi::v1::Volume again = MustCreate("pvc-fresh", 2);
  EXPECT_EQ(again.volume_id(), volume.volume_id());
  EXPECT_EQ(CountSimRequests("POST", "disk_create"), 2) << "the second POST was refused by name";
  auto published = MustPublish(volume.volume_id(), node);
  EXPECT_EQ(published.publish_context().at("diskName"), volume.volume_context().at("diskName"));
  ASSERT_TRUE(Unpublish(volume.volume_id(), "").ok());
  ASSERT_TRUE(Delete(volume.volume_id()).ok());
  EXPECT_TRUE(SimDisk(volume.volume_id()).is_null());
}

// ---- objects of another project ------------------------------------------------------------

// Oxide finds a disk by id in any project the token can see; the plugin acts only on its own
// project's, so a wrong volume handle can never detach, attach or delete someone else's disk.
TEST_F(ControllerTest, ADiskOfAnotherProjectIsNeverTouched) {
  ASSERT_EQ(api_->post("/__sim/projects", {{"name", "other"}}).status, 201);
  sim_test::Reply made = api_->post("/v1/disks?project=other", sim_test::blank_disk("theirs"));
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string foreign = made.json()["id"];
  sim_test::Reply instance = api_->post(
      "/__sim/instances", {{"project", "other"}, {"name", "their-vm"}, {"run_state", "stopped"}});
  ASSERT_EQ(instance.status, 201) << instance.body;
  const std::string their_vm = instance.json()["id"];
  const std::string our_node = Instance("node-ours");

  const std::string refusal = "belongs to another project";
  ExpectCode(Publish(foreign, their_vm), StatusCode::FAILED_PRECONDITION, refusal);
  ExpectCode(Publish(foreign, our_node), StatusCode::FAILED_PRECONDITION, refusal);
  EXPECT_EQ(SimDisk(foreign)["state"]["state"], "detached");

  ASSERT_EQ(api_->post("/v1/instances/" + their_vm + "/disks/attach", {{"disk", foreign}}).status,
            202);
  ExpectCode(Unpublish(foreign, ""), StatusCode::FAILED_PRECONDITION, refusal);
  ExpectCode(Unpublish(foreign, their_vm), StatusCode::FAILED_PRECONDITION, refusal);
  EXPECT_EQ(SimDisk(foreign)["state"]["state"], "attached");
  ASSERT_EQ(api_->post("/v1/instances/" + their_vm + "/disks/detach", {{"disk", foreign}}).status,
            202);

  ExpectCode(Delete(foreign), StatusCode::FAILED_PRECONDITION, "not to project \"demo\"");
  EXPECT_FALSE(SimDisk(foreign).is_null()) << "another project's disk was deleted";
  EXPECT_EQ(CountSimRequests("DELETE", "disk_delete"), 0);

  csi::v1::ControllerGetVolumeRequest get;
  get.set_volume_id(foreign);
  csi::v1::ControllerGetVolumeResponse got;
  ExpectCode(controller_->ControllerGetVolume(Call().get(), get, &got),
             StatusCode::FAILED_PRECONDITION, refusal);
  csi::v1::ValidateVolumeCapabilitiesRequest validate;
  validate.set_volume_id(foreign);
  *validate.add_volume_capabilities() = MountCapability();
  csi::v1::ValidateVolumeCapabilitiesResponse validated;
  ExpectCode(controller_->ValidateVolumeCapabilities(Call().get(), validate, &validated),
             StatusCode::FAILED_PRECONDITION, refusal);
  csi::v1::CreateVolumeRequest clone = CreateRequest("pvc-clone-of-theirs");
  clone.mutable_volume_content_source()->mutable_volume()->set_volume_id(foreign);
  ExpectCode(Create(clone), StatusCode::FAILED_PRECONDITION, refusal);

  // The plugin's own volumes still work (but not on another project's instance, which Oxide
  // refuses), and nothing of the foreign disk was recorded.
  csi::v1::Volume ours = MustCreate("pvc-ours");
  ExpectCode(Publish(ours.volume_id(), their_vm), StatusCode::FAILED_PRECONDITION,
             "instance of the disk's project");
  EXPECT_EQ(SimDisk(ours.volume_id())["state"]["state"], "detached");
  MustPublish(ours.volume_id(), our_node);
  ASSERT_TRUE(Unpublish(ours.volume_id(), "").ok());
  ASSERT_TRUE(Delete(ours.volume_id()).ok());
  StopPlugin();
  std::string error;
  EXPECT_TRUE(SqliteQuery(setup_->state_db(),
                          "SELECT * FROM volumes WHERE volume_id = '" + foreign + "'", &error)
                  .empty())
      << error;
  EXPECT_TRUE(
      SqliteQuery(setup_->state_db(), "SELECT id FROM operations WHERE state = 'pending'", &error)
          .empty())
      << error;
}

}  // namespace
}  // namespace oxide::testing

namespace oxide::testing {
namespace {

// Issue 22 item 5: the disk of a volume deleted directly in Oxide; CreateVolume with the same name
// makes a new one, and the log says so with both ids.
TEST_F(ControllerTest, ReCreatingAVolumeWhoseDiskVanishedFromOxideLogsBothIds) {
  const csi::v1::Volume first = MustCreate("pvc-vanished");
  ASSERT_FALSE(first.volume_id().empty());
  ASSERT_EQ(api_->del("/v1/disks/" + first.volume_id()).status, 204);
  const csi::v1::Volume second = MustCreate("pvc-vanished");
  ASSERT_FALSE(second.volume_id().empty());
  EXPECT_NE(second.volume_id(), first.volume_id());
  const std::string warning = "re-creating volume: its earlier disk vanished from Oxide";
  ASSERT_TRUE(plugin_->WaitForLog(warning)) << plugin_->Log();
  const std::string line = LogLineWith(plugin_->Log(), warning);
  EXPECT_NE(line.find("level=warn"), std::string::npos) << line;
  EXPECT_NE(line.find("old_volume_id=" + first.volume_id()), std::string::npos) << line;
  EXPECT_NE(line.find("volume_id=" + second.volume_id()), std::string::npos) << line;
  EXPECT_NE(line.find("pvc-vanished"), std::string::npos) << line;
}

TEST_F(ControllerTest, CreatingAVolumeThatOxideStillHasLogsNoReCreation) {
  const csi::v1::Volume first = MustCreate("pvc-still-there");
  EXPECT_EQ(MustCreate("pvc-still-there").volume_id(), first.volume_id());
  EXPECT_EQ(plugin_->Log().find("re-creating volume"), std::string::npos) << plugin_->Log();
}

}  // namespace
}  // namespace oxide::testing
