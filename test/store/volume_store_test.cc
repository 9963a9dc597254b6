// The controller's tables on a real SQLite file: migration from schema 1, volume and snapshot
// rows (in memory and in the file, also after a restart) and the operation journal, with the
// start of its oldest unfinished entry (the gauge the "operations pending" alert reads).
#include "store/volume_store.h"

#include <gtest/gtest.h>
#include <uv.h>

#include <tuple>

#include "metrics/plugin_metrics.h"
#include "store/snapshot_store.h"
#include "store_fixture.h"

namespace oxide::store {
namespace {

using testing::TempDir;

class VolumeStoreTest : public StoreFileTest {
 protected:
  void SetUp() override {
    StoreFileTest::SetUp();
    MakeVolumeStore();
  }
};

VolumeRow Row(const std::string& name, const std::string& id = "") {
  return {.disk_name = name,
          .volume_id = id,
          .co_name = "co-" + name,
          .size = 1 << 30,
          .block_size = 4096,
          .state = "CREATED",
          .node_id = ""};
}

TEST_F(VolumeStoreTest, VolumeRowsByNameAndId) {
  store_->Put(Row("creating"));  // no id yet
  store_->Put(Row("other"));     // two rows without id may coexist
  store_->Put(Row("made", "11111111-2222-3333-4444-555555555555"));
  Durable();
  EXPECT_FALSE(store_->FindByVolumeId("").has_value());
  auto made = store_->FindByVolumeId("11111111-2222-3333-4444-555555555555");
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ(made->disk_name, "made");
  EXPECT_EQ(made->co_name, "co-made");
  EXPECT_EQ(made->size, 1u << 30);
  auto creating = store_->FindByDiskName("creating");
  ASSERT_TRUE(creating.has_value());
  EXPECT_EQ(creating->volume_id, "");
  VolumeRow updated = *creating;
  updated.state = "NODE_READY";
  updated.node_id = "node";
  store_->Put(updated);
  store_->Remove("other");
  Durable();
  EXPECT_EQ(store_->FindByDiskName("creating")->state, "NODE_READY");
  EXPECT_EQ(store_->AllVolumes().size(), 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM volumes WHERE disk_name = 'creating' AND state = "
                  "'NODE_READY'"),
            1);
  // A restart reads the same rows back.
  store_.reset();
  store_ = std::make_unique<VolumeStore>(db_.get(), commit_.get());
  EXPECT_EQ(store_->FindByDiskName("creating")->node_id, "node");
  EXPECT_EQ(store_->FindByVolumeId("11111111-2222-3333-4444-555555555555")->disk_name, "made");
  EXPECT_EQ(store_->AllVolumes().size(), 2u);
}

TEST_F(VolumeStoreTest, AStateChangeRewritesTheRowInPlaceAndANewUuidReplacesIt) {
  const std::string first_id = "11111111-2222-3333-4444-555555555555";
  const std::string second_id = "66666666-7777-8888-9999-000000000000";
  store_->Put(Row("vol", first_id));
  store_->Put(Row("later"));  // a replaced row would get a rowid after this one
  Durable();
  const std::string rowid_of_vol = "SELECT rowid FROM volumes WHERE disk_name = 'vol'";
  const int64_t rowid = Count(rowid_of_vol);

  VolumeRow published = Row("vol", first_id);
  published.state = "PUBLISHED";
  published.node_id = "node-1";
  store_->Put(published);
  Durable();
  EXPECT_EQ(Count(rowid_of_vol), rowid);  // in place: no delete and insert
  EXPECT_EQ(store_->FindByVolumeId(first_id)->state, "PUBLISHED");
  EXPECT_EQ(store_->FindByDiskName("vol")->node_id, "node-1");

  store_->Put(Row("vol", second_id));  // the disk was made anew
  Durable();
  EXPECT_FALSE(store_->FindByVolumeId(first_id).has_value());
  ASSERT_TRUE(store_->FindByVolumeId(second_id).has_value());
  EXPECT_EQ(store_->FindByVolumeId(second_id)->state, "CREATED");
  EXPECT_EQ(Count("SELECT count(*) FROM volumes"), 2);
}

TEST_F(VolumeStoreTest, SnapshotRowsByNameIdAndThoseStillCreating) {
  SnapshotStore snapshots(db_.get(), commit_.get());
  SnapshotRow pending{.snapshot_name = "csi-snap-a",
                      .snapshot_id = "",
                      .co_name = "a",
                      .source_volume_id = "11111111-2222-3333-4444-555555555555",
                      .size = 0,
                      .state = "creating",
                      .time_created = "",
                      .polls = 0};
  SnapshotRow uploading = pending;
  uploading.snapshot_name = "csi-snap-b";
  uploading.snapshot_id = "22222222-2222-3333-4444-555555555555";
  uploading.size = 1 << 30;
  uploading.time_created = "2026-11-22T01:53:34.227581Z";
  SnapshotRow ready = uploading;
  ready.snapshot_name = "csi-snap-c";
  ready.snapshot_id = "33333333-2222-3333-4444-555555555555";
  ready.state = "ready";
  ready.polls = 4;
  for (const SnapshotRow& row : {pending, uploading, ready})
    snapshots.Put(row);
  Durable();
  EXPECT_FALSE(snapshots.FindById("").has_value());
  auto found = snapshots.FindById(ready.snapshot_id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->snapshot_name, "csi-snap-c");
  EXPECT_EQ(found->polls, 4);
  EXPECT_EQ(found->time_created, ready.time_created);
  std::vector<SnapshotRow> creating = snapshots.Creating();
  ASSERT_EQ(creating.size(), 2u);
  EXPECT_EQ(creating[0].snapshot_name, "csi-snap-a");
  EXPECT_EQ(creating[1].snapshot_id, uploading.snapshot_id);
  uploading.state = "ready";
  snapshots.Put(uploading);
  snapshots.Remove("csi-snap-a");
  Durable();
  EXPECT_TRUE(snapshots.Creating().empty());
  EXPECT_FALSE(snapshots.FindByName("csi-snap-a").has_value());
  EXPECT_EQ(Count("SELECT count(*) FROM snapshots"), 2);
}

TEST_F(VolumeStoreTest, JournalEntriesOpenAndCloseAndOnlyUnfinishedOnesStayInMemory) {
  const int64_t first = store_->journal().BeginOperation("create", "disk-a", R"({"co_name":"a"})");
  const int64_t second = store_->journal().BeginOperation("delete", "vol-b", "{}");
  EXPECT_GT(second, first);
  Durable();
  auto open = store_->journal().UnfinishedOperations();
  ASSERT_EQ(open.size(), 2u);
  EXPECT_EQ(open[0].kind, "create");
  EXPECT_EQ(open[0].args, R"({"co_name":"a"})");
  store_->journal().FinishOperation(first, "done", "OK");
  Durable();
  ASSERT_EQ(store_->journal().UnfinishedOperations().size(), 1u);
  EXPECT_FALSE(store_->journal().FindUnfinishedOperation(first).has_value());
  EXPECT_TRUE(store_->journal().FindUnfinishedOperation(second).has_value());
  const std::string first_row =
      "SELECT count(*) FROM operations WHERE id = " + std::to_string(first) +
      " AND state = 'done' AND outcome = 'OK'";
  EXPECT_EQ(Count(first_row), 1);
  // A restart reads the unfinished entry back and numbers new entries after every old one.
  store_.reset();
  MakeVolumeStore();
  ASSERT_EQ(store_->journal().UnfinishedOperations().size(), 1u);
  EXPECT_EQ(store_->journal().UnfinishedOperations()[0].id, second);
  EXPECT_GT(store_->journal().BeginOperation("publish", "vol-c", "{}"), second);
}

// Every column of every controller table is read back into its own field after a restart (the
// stores read a row's columns by position, in the order of their column lists).
TEST_F(VolumeStoreTest, EveryFieldOfEveryRowReadsBackAfterAReopen) {
  const VolumeRow volume{.disk_name = "disk-a",
                         .volume_id = "11111111-2222-3333-4444-555555555555",
                         .co_name = "co-a",
                         .size = 3ull << 32,
                         .block_size = 512,
                         .state = "PUBLISHED",
                         .node_id = "66666666-2222-3333-4444-555555555555"};
  const SnapshotRow snapshot{.snapshot_name = "csi-snap-a",
                             .snapshot_id = "22222222-2222-3333-4444-555555555555",
                             .co_name = "snap-a",
                             .source_volume_id = volume.volume_id,
                             .size = 5ull << 30,
                             .state = "ready",
                             .time_created = "2026-11-22T01:53:34.227581Z",
                             .polls = 7};
  clock_.SetWall(1'764'000'000'123);
  const int64_t entry = store_->journal().BeginOperation("publish", volume.volume_id, "{\"n\":1}");
  const int64_t started_ms = store_->journal().UnfinishedOperations().at(0).started_ms;
  store_->Put(volume);
  SnapshotStore(db_.get(), commit_.get()).Put(snapshot);
  Durable();
  store_.reset();
  MakeVolumeStore();
  auto fields = [](const VolumeRow& r) {
    return std::tie(r.disk_name, r.volume_id, r.co_name, r.size, r.block_size, r.state, r.node_id);
  };
  std::optional<VolumeRow> volume_read = store_->FindByDiskName("disk-a");
  ASSERT_TRUE(volume_read.has_value());
  EXPECT_EQ(fields(*volume_read), fields(volume));
  auto snapshot_fields = [](const SnapshotRow& r) {
    return std::tie(r.snapshot_name, r.snapshot_id, r.co_name, r.source_volume_id, r.size, r.state,
                    r.time_created, r.polls);
  };
  std::optional<SnapshotRow> snapshot_read =
      SnapshotStore(db_.get(), commit_.get()).FindByName("csi-snap-a");
  ASSERT_TRUE(snapshot_read.has_value());
  EXPECT_EQ(snapshot_fields(*snapshot_read), snapshot_fields(snapshot));
  const std::vector<OperationRow> entries = store_->journal().UnfinishedOperations();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].id, entry);
  EXPECT_EQ(entries[0].kind, "publish");
  EXPECT_EQ(entries[0].subject, volume.volume_id);
  EXPECT_EQ(entries[0].args, "{\"n\":1}");
  EXPECT_EQ(entries[0].started_ms, started_ms);
  EXPECT_NE(started_ms, 0);
}

TEST(VolumeStoreMigration, ASchemaOneDatabaseIsUpgradedKeepingItsData) {
  TempDir dir;
  std::string path = dir.File("old.db");
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_TRUE(Exec(raw,
                     "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;"
                     "INSERT INTO meta VALUES ('created_by', 'oxide-csi-plugin'), ('k', 'v');"
                     "PRAGMA user_version=1;")
                    .ok());
    sqlite3_close(raw);
  }
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_GE((*db)->schema_version(), 2);
  Statement kept((*db)->handle(), "SELECT value FROM meta WHERE key = 'k'");
  ASSERT_EQ(kept.Step(), SQLITE_ROW);
  EXPECT_EQ(kept.ColumnText(0), "v");
  Statement tables((*db)->handle(),
                   "SELECT count(*) FROM sqlite_master WHERE name IN ('volumes', 'operations')");
  ASSERT_EQ(tables.Step(), SQLITE_ROW);
  EXPECT_EQ(tables.ColumnInt(0), 2);
}

// oxide_csi_oldest_pending_operation_start_time_seconds: the journal time of the oldest
// unfinished entry, also one read back after a restart; 0 once none is left.
TEST_F(VolumeStoreTest, TheOldestPendingGaugeGivesTheStartOfTheOldestUnfinishedEntry) {
  metrics::Gauge& oldest = metrics::Families().oldest_pending_operation_start.With({});
  const double t0 = static_cast<double>(clock_.WallMillis()) / 1e3;
  EXPECT_EQ(oldest.value(), 0) << "nothing pending";
  const int64_t first = store_->journal().BeginOperation("create", "disk-a", "{}");
  clock_.Advance(std::chrono::minutes(20));
  const int64_t second = store_->journal().BeginOperation("delete", "vol-b", "{}");
  EXPECT_EQ(oldest.value(), t0);
  Durable();
  // A restart reads the unfinished entries back with their times.
  store_.reset();
  oldest.Set(-1);
  MakeVolumeStore();
  EXPECT_EQ(oldest.value(), t0);
  store_->journal().FinishOperation(first, "done", "");
  EXPECT_EQ(oldest.value(), t0 + 20 * 60) << "the next oldest";
  store_->journal().FinishOperation(second, "done", "");
  EXPECT_EQ(oldest.value(), 0);
  Durable();
}

}  // namespace
}  // namespace oxide::store
