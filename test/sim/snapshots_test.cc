// Snapshot create/view/list/delete and their rules (README §8).
#include "sim_fixture.h"

namespace sim_test {
namespace {

using SnapshotTest = SimTest;

nlohmann::json snapshot_body(const std::string& name, const std::string& disk) {
  return {{"name", name}, {"description", "d"}, {"disk", disk}};
}

TEST_F(SnapshotTest, CreateAnswersReadyAndCounts) {
  const std::string disk_id = create_disk("pv-a", 3)["id"];
  Reply made = api().post("/v1/snapshots?project=demo", snapshot_body("snap-a", "pv-a"));
  ASSERT_EQ(made.status, 201) << made.body;
  const nlohmann::json snapshot = made.json();
  EXPECT_EQ(snapshot["state"], "ready");
  EXPECT_EQ(snapshot["disk_id"], disk_id);
  EXPECT_EQ(snapshot["size"], 3 * kGiB);
  EXPECT_EQ(snapshot["description"], "d");
  EXPECT_FALSE(snapshot.contains("block_size"));
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "detached"}}));
  const std::string id = snapshot["id"];
  EXPECT_EQ(api().get("/v1/snapshots/" + id).json()["name"], "snap-a");
  EXPECT_EQ(api().get("/v1/snapshots/snap-a?project=demo").json()["id"], id);
  EXPECT_EQ(api().get("/v1/snapshots?project=demo").json()["items"].size(), 1U);
  // By disk id too.
  EXPECT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("snap-b", disk_id)).status, 201);
}

TEST_F(SnapshotTest, Errors) {
  const std::string disk_id = create_disk("pv-a")["id"];
  expect_error(api().post("/v1/snapshots?project=demo", snapshot_body("s", "nope")), 404,
               "ObjectNotFound", "not found: disk with name \"nope\"");
  expect_error(api().post("/v1/snapshots?project=demo",
                          snapshot_body("s", "00000000-0000-4000-8000-000000000003")),
               404, "ObjectNotFound",
               "not found: disk with id \"00000000-0000-4000-8000-000000000003\"");
  ASSERT_EQ(api().post("/__sim/projects", {{"name", "other"}}).status, 201);
  expect_error(api().post("/v1/snapshots?project=other", snapshot_body("s", disk_id)), 400,
               "InvalidRequest", "can't create a snapshot of a disk in a different project");
  ASSERT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("s", "pv-a")).status, 201);
  expect_error(api().post("/v1/snapshots?project=demo", snapshot_body("s", "pv-a")), 400,
               "ObjectAlreadyExists", "already exists: snapshot \"s\"");
  ASSERT_EQ(api().put("/__sim/config", {{"storage_quota", 2 * kGiB}}).status, 200);
  Reply full = api().post("/v1/snapshots?project=demo", snapshot_body("s2", "pv-a"));
  EXPECT_EQ(full.status, 507);
  EXPECT_EQ(full.json()["error_code"], "InsufficientCapacity");
  expect_error(api().get("/v1/snapshots/s"), 400, "InvalidRequest",
               "snapshot should either be an ID or project should be specified");
  const std::string id = api().get("/v1/snapshots/s?project=demo").json()["id"];
  expect_error(api().get("/v1/snapshots/" + id + "?project=demo"), 400, "InvalidRequest",
               "when providing snapshot as an ID, project should not be specified");
  expect_error(api().get("/v1/snapshots?project=demo&sort_by=size"), 400, nullptr,
               "unable to parse query string: unknown variant `size`, expected one of "
               "`name_ascending`, `name_descending`, `id_ascending`");
}

TEST_F(SnapshotTest, ReadOnlyAndNonDetachedStates) {
  create_disk("src");
  const std::string snapshot_id =
      api().post("/v1/snapshots?project=demo", snapshot_body("s", "src")).json()["id"];
  nlohmann::json read_only = {
      {"name", "ro"},
      {"description", ""},
      {"size", kGiB},
      {"disk_backend",
       {{"type", "distributed"},
        {"disk_source",
         {{"type", "snapshot"}, {"snapshot_id", snapshot_id}, {"read_only", true}}}}}};
  ASSERT_EQ(api().post("/v1/disks?project=demo", read_only).status, 201);
  expect_error(api().post("/v1/snapshots?project=demo", snapshot_body("s2", "ro")), 400,
               "InvalidRequest", "can't create a snapshot of a read-only disk");
  nlohmann::json import = {
      {"name", "imp"},
      {"description", ""},
      {"size", kGiB},
      {"disk_backend",
       {{"type", "distributed"},
        {"disk_source", {{"type", "importing_blocks"}, {"block_size", 512}}}}}};
  ASSERT_EQ(api().post("/v1/disks?project=demo", import).status, 201);
  expect_error(api().post("/v1/snapshots?project=demo", snapshot_body("s3", "imp")), 503,
               "ServiceNotAvailable", "Service Unavailable");
}

TEST_F(SnapshotTest, AttachedDisksCanBeSnapshotted) {
  create_disk("pv-a");
  create_disk("pv-b");
  control_instance("stopped-node", "stopped");
  control_instance("running-node", "stopped");
  attach("stopped-node", "pv-a");
  attach("running-node", "pv-b");
  ASSERT_EQ(api().put("/__sim/instances/running-node", {{"run_state", "running"}}).status, 200);
  EXPECT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("sa", "pv-a")).status, 201);
  EXPECT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("sb", "pv-b")).status, 201);
}

TEST_F(SnapshotTest, DeleteRulesAndSurvival) {
  create_disk("pv-a");
  ASSERT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("s", "pv-a")).status, 201);
  // The source disk can go; the snapshot stays; disks made from it stay.
  ASSERT_EQ(api().del("/v1/disks/pv-a?project=demo").status, 204);
  EXPECT_EQ(api().get("/v1/snapshots/s?project=demo").json()["state"], "ready");
  Reply deleted = api().del("/v1/snapshots/s?project=demo");
  EXPECT_EQ(deleted.status, 204);
  expect_error(api().del("/v1/snapshots/s?project=demo"), 404, "ObjectNotFound",
               "not found: snapshot with name \"s\"");
}

class SnapshotFrozenTest : public SimTest {
 protected:
  std::vector<std::string> sim_args() const override { return {"--async"}; }
};

TEST_F(SnapshotFrozenTest, CreatingSnapshotCannotBeDeletedAndHoldsDiskInMaintenance) {
  create_disk("pv-a");
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "snapshot"}, {"name", "s"}}).status, 200);
  Reply made = api().post("/v1/snapshots?project=demo", snapshot_body("s", "pv-a"));
  ASSERT_EQ(made.status, 201);
  EXPECT_EQ(made.json()["state"], "creating");
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "maintenance"}}));
  expect_error(api().del("/v1/snapshots/s?project=demo"), 400, "InvalidRequest",
               "snapshot cannot be deleted in state Creating");
  expect_error(api().del("/v1/disks/pv-a?project=demo"), 400, "InvalidRequest",
               "disk cannot be deleted in state \"maintenance\"");
  expect_error(api().post("/v1/snapshots?project=demo", snapshot_body("s2", "pv-a")), 503,
               "ServiceNotAvailable", "Service Unavailable");
  ASSERT_EQ(api().post("/__sim/release", {{"kind", "snapshot"}, {"name", "s"}}).status, 200);
  EXPECT_EQ(api().get("/v1/snapshots/s?project=demo").json()["state"], "ready");
  EXPECT_EQ(disk_state("pv-a"), nlohmann::json({{"state", "detached"}}));
}

TEST_F(SnapshotFrozenTest, SecondSnapshotOfADiskOnARunningInstanceIsAConflict) {
  create_disk("pv-a");
  control_instance("vm", "stopped");
  attach("vm", "pv-a");
  ASSERT_EQ(api().put("/__sim/instances/vm", {{"run_state", "running"}}).status, 200);
  ASSERT_EQ(api().post("/__sim/freeze", {{"kind", "snapshot"}, {"name", "first"}}).status, 200);
  ASSERT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("first", "pv-a")).status, 201);
  EXPECT_EQ(disk_state("pv-a")["state"], "attached");  // the VMM path leaves the disk alone
  expect_error(api().post("/v1/snapshots?project=demo", snapshot_body("second", "pv-a")), 409,
               "Conflict", "volume repair lock");
  ASSERT_EQ(api().post("/__sim/release", {{"kind", "snapshot"}, {"name", "first"}}).status, 200);
  EXPECT_EQ(api().post("/v1/snapshots?project=demo", snapshot_body("second", "pv-a")).status, 201);
}

}  // namespace
}  // namespace sim_test
