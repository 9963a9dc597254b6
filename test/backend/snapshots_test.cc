// Snapshots, disks from snapshots, utilization, me and ping against oxide-sim.
#include "backend_fixture.h"

namespace backend_test {
namespace {

using SnapshotTest = BackendTest;

StatusOr<Snapshot> CreateSnapshot(BackendTest& t, const std::string& name,
                                  const std::string& disk) {
  SnapshotCreate create{name, "test snapshot", disk};
  return t.Await<Snapshot>(
      [&](Done<Snapshot> done) { t.client().CreateSnapshot(create, std::move(done)); });
}

TEST_F(SnapshotTest, CreateGetListDeleteAndRestoreIntoADisk) {
  auto disk = CreateBlankDisk("pv-a", 2);
  ASSERT_TRUE(disk.ok());
  auto snapshot = CreateSnapshot(*this, "snap-a", "pv-a");
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_EQ(snapshot->disk_id, disk->id);
  EXPECT_EQ(snapshot->size, 2 * kGiB);
  EXPECT_EQ(snapshot->state, oxide::backend::SnapshotStatus::kReady);

  for (const std::string& key : {std::string("snap-a"), snapshot->id}) {
    auto got =
        Await<Snapshot>([&](Done<Snapshot> done) { client().GetSnapshot(key, std::move(done)); });
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->id, snapshot->id);
  }
  auto page = Await<Page<Snapshot>>(
      [&](Done<Page<Snapshot>> done) { client().ListSnapshots({}, std::move(done)); });
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1U);
  EXPECT_TRUE(page->next_page.has_value());

  DiskCreate restore{"pv-b", "restored", 3 * kGiB, 4096, snapshot->id};
  auto restored =
      Await<Disk>([&](Done<Disk> done) { client().CreateDisk(restore, std::move(done)); });
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(restored->snapshot_id, snapshot->id);
  restore.name = "pv-c";
  restore.size = kGiB;
  ExpectError(
      Await<Disk>([&](Done<Disk> done) { client().CreateDisk(restore, std::move(done)); }).status(),
      StatusCode::kOutOfRange, {"must be greater than or equal to snapshot size"});

  ExpectError(CreateSnapshot(*this, "snap-a", "pv-a").status(), StatusCode::kAlreadyExists,
              {"already exists: snapshot \"snap-a\""});
  EXPECT_TRUE(AwaitStatus([&](DoneStatus d) { client().DeleteSnapshot("snap-a", d); }).ok());
  ExpectError(AwaitStatus([&](DoneStatus d) { client().DeleteSnapshot(snapshot->id, d); }),
              StatusCode::kNotFound, {"not found: snapshot with id"});
}

TEST_F(SnapshotTest, SnapshotOfAMissingDiskIsNotFound) {
  ExpectError(CreateSnapshot(*this, "snap-x", "pv-missing").status(), StatusCode::kNotFound,
              {"create snapshot \"snap-x\" of disk \"pv-missing\"", "not found: disk"});
}

TEST_F(SnapshotTest, UtilizationMeAndPing) {
  ASSERT_TRUE(CreateBlankDisk("pv-a", 2).ok());
  auto utilization =
      Await<Utilization>([&](Done<Utilization> done) { client().GetUtilization(std::move(done)); });
  ASSERT_TRUE(utilization.ok()) << utilization.status().ToString();
  EXPECT_EQ(utilization->provisioned.storage, 2 * kGiB);
  EXPECT_GT(utilization->capacity.storage, 0U);
  auto me =
      Await<CurrentUser>([&](Done<CurrentUser> done) { client().GetCurrentUser(std::move(done)); });
  ASSERT_TRUE(me.ok()) << me.status().ToString();
  EXPECT_FALSE(me->id.empty());
  EXPECT_FALSE(me->silo_name.empty());
  EXPECT_TRUE(AwaitStatus([&](DoneStatus d) { client().Ping(d); }).ok());
}

TEST_F(SnapshotTest, WrongTokenIsUnauthenticatedButPingStillWorks) {
  ClientConfig config = DefaultConfig();
  config.transport.token = "oxide-token-wrong";
  Rebuild(config);
  ExpectError(Await<CurrentUser>([&](Done<CurrentUser> done) {
                client().GetCurrentUser(std::move(done));
              }).status(),
              StatusCode::kUnauthenticated, {"did not accept the API token", "(oxide request id "});
  EXPECT_TRUE(AwaitStatus([&](DoneStatus d) { client().Ping(d); }).ok());
}

using PaginationTest = BackendTest;

TEST_F(PaginationTest, ListsEveryDiskThroughSeveralPages) {
  for (int i = 0; i < 7; ++i)
    ASSERT_TRUE(CreateBlankDisk("pv-" + std::to_string(i)).ok());
  for (const SortBy sort : {SortBy::kNameAscending, SortBy::kNameDescending}) {
    std::vector<std::string> names;
    std::vector<size_t> page_sizes;
    PageRequest request;
    request.limit = 3;
    request.sort_by = sort;
    for (int pages = 0; pages < 10; ++pages) {
      auto page = Await<Page<Disk>>(
          [&](Done<Page<Disk>> done) { client().ListDisks(request, std::move(done)); });
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      page_sizes.push_back(page->items.size());
      for (const auto& disk : page->items)
        names.push_back(disk.name);
      if (page->items.empty() || !page->next_page) break;
      request.page_token = *page->next_page;
    }
    EXPECT_EQ(page_sizes, (std::vector<size_t>{3, 3, 1, 0}));
    std::vector<std::string> expected = {"pv-0", "pv-1", "pv-2", "pv-3", "pv-4", "pv-5", "pv-6"};
    if (sort == SortBy::kNameDescending) std::reverse(expected.begin(), expected.end());
    EXPECT_EQ(names, expected);
  }
}

}  // namespace
}  // namespace backend_test
