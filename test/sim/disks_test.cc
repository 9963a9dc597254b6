// Disk create/view/list/delete: happy paths and every documented error (README §3, §7).
#include "sim_fixture.h"

namespace sim_test {
namespace {

using DiskTest = SimTest;

nlohmann::json disk_with(uint64_t size, nlohmann::json source) {
  return {{"name", "pv-x"},
          {"description", ""},
          {"size", size},
          {"disk_backend", {{"type", "distributed"}, {"disk_source", std::move(source)}}}};
}

TEST_F(DiskTest, CreateAnswersCreatingThenGetSaysDetached) {
  const nlohmann::json created = create_disk("pv-a", 10);
  EXPECT_EQ(created["state"], nlohmann::json({{"state", "creating"}}));
  EXPECT_EQ(created["name"], "pv-a");
  EXPECT_EQ(created["size"], 10 * kGiB);
  EXPECT_EQ(created["block_size"], 4096);
  EXPECT_EQ(created["device_path"], "/mnt/pv-a");
  EXPECT_EQ(created["disk_type"], "distributed");
  EXPECT_EQ(created["read_only"], false);
  EXPECT_TRUE(created["snapshot_id"].is_null());
  EXPECT_TRUE(created["image_id"].is_null());
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "detached"}}));
  const std::string id = created["id"];
  Reply by_id = api().get("/v1/disks/" + id);
  EXPECT_EQ(by_id.status, 200);
  EXPECT_EQ(by_id.json()["name"], "pv-a");
  std::string upper = id;
  for (char& c : upper)
    c = static_cast<char>(toupper(c));
  EXPECT_EQ(api().get("/v1/disks/" + upper).json()["id"], id);
}

TEST_F(DiskTest, BlockSizesAndTheirRules) {
  for (int block_size : {512, 2048, 4096}) {
    const nlohmann::json disk = create_disk("bs-" + std::to_string(block_size), 1, block_size);
    EXPECT_EQ(disk["block_size"], block_size);
  }
  Reply bad = api().post("/v1/disks?project=demo",
                         disk_with(kGiB, {{"type", "blank"}, {"block_size", 1024}}));
  expect_error(bad, 400, nullptr, "unable to parse JSON body: invalid block size 1024");
}

TEST_F(DiskTest, SizeChecksInServerOrder) {
  auto create = [&](uint64_t size) {
    return api().post("/v1/disks?project=demo",
                      disk_with(size, {{"type", "blank"}, {"block_size", 4096}}));
  };
  expect_error(create(kGiB + 512), 400, "InvalidValue",
               "unsupported value for \"size and block_size\": total size must be a multiple of "
               "block size 4096");
  expect_error(create(0), 400, "InvalidValue",
               "unsupported value for \"size\": total size must be at least 1 GiB");
  expect_error(create(kGiB / 2), 400, "InvalidValue",
               "unsupported value for \"size\": total size must be at least 1 GiB");
  expect_error(create(kGiB + 4096), 400, "InvalidValue",
               "unsupported value for \"size\": total size must be a multiple of 1 GiB");
  expect_error(create(1024 * kGiB), 400, "InvalidValue",
               "unsupported value for \"size\": total size must be less than 1023 GiB");
  EXPECT_EQ(create(1023 * kGiB).status, 201);  // the maximum itself is allowed
}

TEST_F(DiskTest, QuotaIsCheckedBeforeDuplicateName) {
  ASSERT_EQ(api().put("/__sim/config", {{"storage_quota", 3 * kGiB}}).status, 200);
  create_disk("pv-a", 2);
  const std::string quota_message =
      "Insufficient capacity: Storage Limit Exceeded: Not enough storage to complete request. "
      "Either remove unneeded disks and snapshots to free up resources or contact the rack "
      "operator to request a capacity increase.";
  expect_error(api().post("/v1/disks?project=demo", blank_disk("pv-a", 2)), 507,
               "InsufficientCapacity", quota_message);
  expect_error(api().post("/v1/disks?project=demo", blank_disk("pv-a", 1)), 400,
               "ObjectAlreadyExists", "already exists: disk \"pv-a\"");
  EXPECT_EQ(api().post("/v1/disks?project=demo", blank_disk("pv-b", 1)).status, 201);
}

TEST_F(DiskTest, ProjectParameterRules) {
  const std::string id = create_disk("pv-a")["id"];
  expect_error(api().get("/v1/disks?limit=5"), 400, nullptr,
               "unable to parse query string: missing field `project`");
  expect_error(api().post("/v1/disks", blank_disk("pv-b")), 400, nullptr,
               "unable to parse query string: missing field `project`");
  expect_error(api().get("/v1/disks/pv-a"), 400, "InvalidRequest",
               "disk should either be UUID or project should be specified");
  expect_error(api().get("/v1/disks/" + id + "?project=demo"), 400, "InvalidRequest",
               "when providing disk as an ID project should not be specified");
  expect_error(api().get("/v1/disks?project=nope"), 404, "ObjectNotFound",
               "not found: project with name \"nope\"");
  expect_error(api().post("/v1/disks?project=nope", blank_disk("pv-b")), 404, "ObjectNotFound",
               "not found: project with name \"nope\"");
  expect_error(api().get("/v1/disks/pv-zz?project=demo"), 404, "ObjectNotFound",
               "not found: disk with name \"pv-zz\"");
  expect_error(api().get("/v1/disks/00000000-0000-4000-8000-00000000000a"), 404, "ObjectNotFound",
               "not found: disk with id \"00000000-0000-4000-8000-00000000000a\"");
  expect_error(api().get("/v1/disks?project=demo&project=demo"), 400, nullptr,
               "unable to parse query string: duplicate field `project`");
}

TEST_F(DiskTest, SameNameInTwoProjects) {
  ASSERT_EQ(api().post("/__sim/projects", {{"name", "other"}}).status, 201);
  create_disk("pv-a");
  create_disk("pv-a", 1, 4096, "other");
  EXPECT_EQ(api().get("/v1/disks?project=other").json()["items"].size(), 1U);
}

TEST_F(DiskTest, DeleteRules) {
  create_disk("pv-a");
  Reply deleted = api().del("/v1/disks/pv-a?project=demo");
  EXPECT_EQ(deleted.status, 204);
  EXPECT_TRUE(deleted.body.empty());
  expect_error(api().del("/v1/disks/pv-a?project=demo"), 404, "ObjectNotFound",
               "not found: disk with name \"pv-a\"");
  create_disk("pv-b");
  control_instance("node", "stopped");
  attach("node", "pv-b");
  expect_error(api().del("/v1/disks/pv-b?project=demo"), 400, "InvalidRequest",
               "disk cannot be deleted in state \"attached\"");
  // A faulted disk can be deleted.
  create_disk("pv-c");
  ASSERT_EQ(api().post("/__sim/fault", {{"kind", "disk"}, {"name", "pv-c"}}).status, 200);
  EXPECT_EQ(disk_state("pv-c"), nlohmann::json({{"state", "faulted"}}));
  EXPECT_EQ(api().del("/v1/disks/pv-c?project=demo").status, 204);
}

TEST_F(DiskTest, FromSnapshotRules) {
  create_disk("src", 2, 512);
  Reply snap = api().post("/v1/snapshots?project=demo",
                          {{"name", "snap"}, {"description", ""}, {"disk", "src"}});
  ASSERT_EQ(snap.status, 201);
  const std::string snapshot_id = snap.json()["id"];
  auto from = [&](uint64_t size, bool read_only, const std::string& id) {
    nlohmann::json body =
        disk_with(size, {{"type", "snapshot"}, {"snapshot_id", id}, {"read_only", read_only}});
    return api().post("/v1/disks?project=demo", body);
  };
  expect_error(from(2 * kGiB, false, "00000000-0000-4000-8000-000000000001"), 404, "ObjectNotFound",
               "not found: snapshot with id \"00000000-0000-4000-8000-000000000001\"");
  expect_error(from(kGiB, false, snapshot_id), 400, "InvalidRequest",
               "disk size 1073741824 must be greater than or equal to snapshot size 2147483648");
  expect_error(from(3 * kGiB, true, snapshot_id), 400, "InvalidRequest",
               "read-only disk size 3221225472 must be equal to source snapshot size 2147483648");
  Reply made = from(3 * kGiB, false, snapshot_id);
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(made.json()["snapshot_id"], snapshot_id);
  EXPECT_EQ(made.json()["block_size"], 512);  // inherited from the snapshot
  ASSERT_EQ(api().del("/v1/disks/pv-x?project=demo").status, 204);
  Reply read_only = from(2 * kGiB, true, snapshot_id);
  ASSERT_EQ(read_only.status, 201);
  EXPECT_EQ(read_only.json()["state"], nlohmann::json({{"state", "detached"}}));
  EXPECT_EQ(read_only.json()["read_only"], true);
  // Another project cannot use the snapshot.
  ASSERT_EQ(api().post("/__sim/projects", {{"name", "other"}}).status, 201);
  nlohmann::json body = disk_with(2 * kGiB, {{"type", "snapshot"}, {"snapshot_id", snapshot_id}});
  expect_error(api().post("/v1/disks?project=other", body), 400, "InvalidRequest",
               "snapshot does not belong to this project");
}

TEST_F(DiskTest, ImageSourceIsNotFoundAndImportEndsImportReady) {
  nlohmann::json image =
      disk_with(kGiB, {{"type", "image"}, {"image_id", "00000000-0000-4000-8000-000000000002"}});
  expect_error(api().post("/v1/disks?project=demo", image), 404, "ObjectNotFound",
               "not found: image with id \"00000000-0000-4000-8000-000000000002\"");
  nlohmann::json import = disk_with(kGiB, {{"type", "importing_blocks"}, {"block_size", 512}});
  ASSERT_EQ(api().post("/v1/disks?project=demo", import).status, 201);
  EXPECT_EQ(disk_state("pv-x"), nlohmann::json({{"state", "import_ready"}}));
  expect_error(api().del("/v1/disks/pv-x?project=demo"), 400, "InvalidRequest",
               "disk cannot be deleted in state \"import_ready\"");
}

nlohmann::json local_disk(const std::string& name, uint64_t size) {
  return {
      {"name", name}, {"description", ""}, {"size", size}, {"disk_backend", {{"type", "local"}}}};
}

TEST_F(DiskTest, LocalDisks) {
  Reply made = api().post("/v1/disks?project=demo", local_disk("loc", 4 * kGiB));
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(made.json()["disk_type"], "local");
  EXPECT_EQ(made.json()["block_size"], 4096);
  EXPECT_EQ(made.json()["state"], nlohmann::json({{"state", "creating"}}));
  EXPECT_TRUE(made.json()["snapshot_id"].is_null());
  EXPECT_TRUE(made.json()["image_id"].is_null());
  EXPECT_EQ(made.json()["read_only"], false);
  EXPECT_EQ(disk_state("loc"), nlohmann::json({{"state", "detached"}}));
  EXPECT_EQ(api().get("/v1/disks/loc?project=demo").json()["disk_type"], "local");
  expect_error(api().post("/v1/snapshots?project=demo",
                          {{"name", "s"}, {"description", ""}, {"disk", "loc"}}),
               400, "InvalidRequest", "can't create a snapshot of a local storage disk");
}

TEST_F(DiskTest, ALocalDiskHasNoSourceAndAlways4096ByteBlocks) {
  // serde ignores a disk_source beside {"type":"local"} like any unknown field (no
  // deny_unknown_fields); the disk is still blank, read-write, with 4096-byte blocks.
  nlohmann::json body = local_disk("loc-src", kGiB);
  body["disk_backend"]["disk_source"] = {{"type", "blank"}, {"block_size", 512}};
  Reply made = api().post("/v1/disks?project=demo", body);
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_EQ(made.json()["block_size"], 4096);
  EXPECT_TRUE(made.json()["snapshot_id"].is_null());
  EXPECT_EQ(made.json()["read_only"], false);
  const std::string snapshot_source = create_disk("dist", 1)["id"];
  Reply snapshot = api().post("/v1/snapshots?project=demo",
                              {{"name", "snap"}, {"description", ""}, {"disk", snapshot_source}});
  ASSERT_EQ(snapshot.status, 201) << snapshot.body;
  body = local_disk("loc-snap", kGiB);
  body["disk_backend"]["disk_source"] = {{"type", "snapshot"},
                                         {"snapshot_id", snapshot.json()["id"]}};
  made = api().post("/v1/disks?project=demo", body);
  ASSERT_EQ(made.status, 201) << made.body;
  EXPECT_TRUE(made.json()["snapshot_id"].is_null()) << "a local disk is never made from a source";
}

TEST_F(DiskTest, LocalSizeChecksInServerOrder) {
  auto create = [&](const std::string& name, uint64_t size) {
    return api().post("/v1/disks?project=demo", local_disk(name, size));
  };
  expect_error(create("loc", kGiB + 512), 400, "InvalidValue",
               "unsupported value for \"size and block_size\": total size must be a multiple of "
               "block size 4096");
  expect_error(create("loc", kGiB / 2), 400, "InvalidValue",
               "unsupported value for \"size\": total size must be at least 1 GiB");
  expect_error(create("loc", kGiB + 4096), 400, "InvalidValue",
               "unsupported value for \"size\": total size must be a multiple of 1 GiB");
  // Above the distributed limit is fine for a local disk; over 10 PiB is refused before the
  // (10 TiB) quota is looked at.
  EXPECT_EQ(create("loc-big", 1024 * kGiB).status, 201);
  expect_error(create("loc", 10 * 1024 * 1024 * kGiB + kGiB), 400, "InvalidValue",
               "unsupported value for \"size\": requested size over 10 PiB");
  // The largest physical disk, when set, bounds local disks only, before the quota.
  Reply config = api().put("/__sim/config", {{"physical_disk_bytes", 8 * kGiB}});
  ASSERT_EQ(config.status, 200);
  EXPECT_EQ(config.json()["physical_disk_bytes"], 8 * kGiB);
  expect_error(create("loc", 9 * kGiB), 400, "InvalidValue",
               "unsupported value for \"size\": requested size is too large to fit on any "
               "physical disk");
  EXPECT_EQ(create("loc-fits", 8 * kGiB).status, 201);
  EXPECT_EQ(create_disk("dist-big", 9)["disk_type"], "distributed");
  ASSERT_EQ(api().put("/__sim/config", {{"storage_quota", 1040 * kGiB}}).status, 200);
  expect_error(create("loc", 8 * kGiB), 507, "InsufficientCapacity",
               "Insufficient capacity: Storage Limit Exceeded: Not enough storage to complete "
               "request. Either remove unneeded disks and snapshots to free up resources or "
               "contact the rack operator to request a capacity increase.");
  ASSERT_EQ(api().post("/__sim/reset", nlohmann::json::object()).status, 200);
  EXPECT_EQ(api().get("/__sim/config").json()["physical_disk_bytes"], 0);
}

}  // namespace
}  // namespace sim_test
