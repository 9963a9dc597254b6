// The client's project scope: Oxide finds a disk or snapshot by id in any project the token can
// see, and the client refuses one that is not in the configured project. Against oxide-sim.
#include "backend_fixture.h"

namespace backend_test {
namespace {

class ProjectScopeTest : public BackendTest {
 protected:
  // A disk (and a snapshot of it) made straight through the API in project `project`.
  std::string ApiDisk(const std::string& project, const std::string& name) {
    sim_test::Reply made =
        control().post("/v1/disks?project=" + project, sim_test::blank_disk(name));
    EXPECT_EQ(made.status, 201) << made.body;
    return made.json().value("id", "");
  }
  std::string ApiSnapshot(const std::string& project, const std::string& disk_id,
                          const std::string& name) {
    sim_test::Reply made = control().post("/v1/snapshots?project=" + project,
                                          {{"name", name}, {"description", ""}, {"disk", disk_id}});
    EXPECT_EQ(made.status, 201) << made.body;
    return made.json().value("id", "");
  }
  void AddProject(const std::string& name) {
    ASSERT_EQ(control().post("/__sim/projects", {{"name", name}}).status, 201);
  }
  StatusOr<Snapshot> GetSnapshot(const std::string& id) {
    return Await<Snapshot>([&](Done<Snapshot> done) { client().GetSnapshot(id, std::move(done)); });
  }
};

TEST_F(ProjectScopeTest, ADiskOrSnapshotOfAnotherProjectFoundByIdIsRefused) {
  AddProject("other");
  const std::string foreign_disk = ApiDisk("other", "foreign-disk");
  const std::string foreign_snapshot = ApiSnapshot("other", foreign_disk, "foreign-snap");

  StatusOr<Disk> disk = GetDisk(foreign_disk);
  ExpectError(disk.status(), StatusCode::kFailedPrecondition,
              {"Oxide disk " + foreign_disk, "\"foreign-disk\"", "belongs to another project",
               "not to project \"demo\"", "--oxide-project"});
  EXPECT_TRUE(IsInAnotherProject(disk.status()));
  StatusOr<Snapshot> snapshot = GetSnapshot(foreign_snapshot);
  ExpectError(snapshot.status(), StatusCode::kFailedPrecondition,
              {"Oxide snapshot " + foreign_snapshot, "belongs to another project"});
  EXPECT_TRUE(IsInAnotherProject(snapshot.status()));

  // The project's own objects pass, by id and by name; a missing id is still NOT_FOUND.
  const std::string own_disk = ApiDisk("demo", "own-disk");
  const std::string own_snapshot = ApiSnapshot("demo", own_disk, "own-snap");
  ASSERT_TRUE(GetDisk(own_disk).ok());
  ASSERT_TRUE(GetSnapshot(own_snapshot).ok());
  ASSERT_TRUE(GetDisk("own-disk").ok());
  StatusOr<Disk> missing = GetDisk("0b6c4ae1-1111-4222-8333-444455556666");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(IsInAnotherProject(missing.status()));
}

TEST_F(ProjectScopeTest, TheProjectIdIsAskedOnceAndAgainOnlyWhenAnObjectDiffers) {
  const std::string first = ApiDisk("demo", "disk-a");
  const std::string second = ApiDisk("demo", "disk-b");
  ClearRequestLog();
  // Concurrent lookups share one project request.
  int answered = 0;
  for (const std::string& id : {first, second, first}) {
    client().GetDisk(id, [&](StatusOr<Disk> disk) {
      EXPECT_TRUE(disk.ok()) << disk.status().ToString();
      ++answered;
    });
  }
  ASSERT_TRUE(RunUntil([&] { return answered == 3; }));
  ASSERT_TRUE(GetDisk(second).ok());
  EXPECT_EQ(CountRequests("GET", "project_view"), 1);
  EXPECT_EQ(CountRequests("GET", "disk_view"), 4);

  // "demo" renamed and a new "demo" made: the new project's disk is asked about once more and
  // accepted; the old one's disks are now another project's.
  ASSERT_EQ(
      control().put("/v1/projects/demo", {{"name", "demo-old"}, {"description", nullptr}}).status,
      200);
  AddProject("demo");
  const std::string in_new = ApiDisk("demo", "disk-c");
  EXPECT_TRUE(GetDisk(in_new).ok());
  EXPECT_EQ(CountRequests("GET", "project_view"), 2);
  EXPECT_TRUE(IsInAnotherProject(GetDisk(first).status()));
}

TEST_F(ProjectScopeTest, AConfiguredProjectThatDoesNotExistIsAFailedPreconditionNotAMissingDisk) {
  const std::string disk = ApiDisk("demo", "disk-x");
  ClientConfig config = DefaultConfig();
  config.project = "no-such-project";
  Rebuild(config);
  ExpectError(GetDisk(disk).status(), StatusCode::kFailedPrecondition,
              {"project \"no-such-project\" (--oxide-project, OXIDE_PROJECT) does not exist in "
               "Oxide, or the API token's user cannot see it",
               "not found: project with name \"no-such-project\""});
}

// Every call that names the project (creates, lists, lookups by name) says that the setting is
// wrong, instead of NOT_FOUND, which a CO takes as final for the object it asked about.
TEST_F(ProjectScopeTest, EveryCallInAMissingProjectAnswersFailedPreconditionNamingTheSetting) {
  ClientConfig config = DefaultConfig();
  config.project = "no-such-project";
  Rebuild(config);
  const std::vector<std::string> expected = {"project \"no-such-project\"", "--oxide-project",
                                             "OXIDE_PROJECT", "(HTTP 404)"};
  ExpectError(Await<Disk>([&](Done<Disk> done) {
                client().CreateDisk({.name = "csi-a",
                                     .description = "",
                                     .size = 1ull << 30,
                                     .block_size = 4096,
                                     .snapshot_id = ""},
                                    std::move(done));
              }).status(),
              StatusCode::kFailedPrecondition, expected);
  ExpectError(Await<Page<Disk>>([&](Done<Page<Disk>> done) {
                client().ListDisks(PageRequest{}, std::move(done));
              }).status(),
              StatusCode::kFailedPrecondition, expected);
  ExpectError(GetDisk("csi-a").status(), StatusCode::kFailedPrecondition, expected);
  ExpectError(Await<Page<Snapshot>>([&](Done<Page<Snapshot>> done) {
                client().ListSnapshots(PageRequest{}, std::move(done));
              }).status(),
              StatusCode::kFailedPrecondition, expected);
  ExpectError(Await<Snapshot>([&](Done<Snapshot> done) {
                client().CreateSnapshot({.name = "snap", .description = "", .disk = "csi-a"},
                                        std::move(done));
              }).status(),
              StatusCode::kFailedPrecondition, expected);
  ExpectError(Await<Instance>([&](Done<Instance> done) {
                client().GetInstance("node-1", std::move(done));
              }).status(),
              StatusCode::kFailedPrecondition, expected);
}

// A 404 for an object in an existing project stays NOT_FOUND.
TEST_F(ProjectScopeTest, AMissingDiskInTheConfiguredProjectIsStillNotFound) {
  EXPECT_EQ(GetDisk("no-such-disk").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace backend_test
