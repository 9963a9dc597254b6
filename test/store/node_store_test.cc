// Unit tests of the node tables on a real SQLite file: rows survive a reopen, states change,
// deletes, lookups by volume; an answer that waits for WhenDurable finds its rows in the file.
#include <gtest/gtest.h>
#include <uv.h>

#include <tuple>

#include "store/group_commit.h"
#include "store/node_volume_store.h"
#include "support/temp_dir.h"

namespace oxide::store {
namespace {

StagingRow Staging(const std::string& id) {
  return {.volume_id = id,
          .staging_path = "/stage/" + id,
          .state = kStaging,
          .capability = "mount:ext4:0::mode=1",
          .block = false,
          .fs_type = "ext4",
          .serial = "csi-0123456789abcdef",
          .device_name = "",
          .device_number = "",
          .format_uuid = ""};
}

// A database, its store thread and the node store, on a loop the test turns.
struct NodeDb {
  explicit NodeDb(const std::string& path) {
    uv_loop_init(&loop);
    auto opened = StateDb::Open(path);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    db = std::move(*opened);
    commit = std::make_unique<GroupCommit>(&loop, db.get());
    store = std::make_unique<NodeVolumeStore>(db.get(), commit.get());
  }
  ~NodeDb() {
    store.reset();
    commit.reset();
    db.reset();
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop), 0);
  }
  // Waits (running the loop) for everything written so far to be durable.
  Status Durable() {
    std::optional<Status> outcome;
    commit->WhenDurable([&](Status s) { outcome = s; });
    while (!outcome)
      uv_run(&loop, UV_RUN_ONCE);
    return *outcome;
  }

  uv_loop_t loop{};
  std::unique_ptr<StateDb> db;
  std::unique_ptr<GroupCommit> commit;
  std::unique_ptr<NodeVolumeStore> store;
};

TEST(NodeVolumeStore, StagingRowsRoundTripAndSurviveAReopen) {
  oxide::testing::TempDir dir;
  {
    NodeDb node(dir.File("state.db"));
    StagingRow row = Staging("v1");
    node.store->PutStaging(row);
    row.state = kStaged;
    row.device_name = "nvme1n1";
    row.device_number = "259:3";
    node.store->PutStaging(row);
    node.store->PutStaging(Staging("v2"));
    node.store->DeleteStaging("v2");
    ASSERT_TRUE(node.Durable().ok());
    // Durable means in the file: a reader sees it now, while the plugin's connection is idle.
    Statement staged(
        node.db->handle(),
        "SELECT count(*) FROM node_stagings WHERE volume_id = 'v1' AND state = 'staged'");
    ASSERT_EQ(staged.Step(), SQLITE_ROW);
    EXPECT_EQ(staged.ColumnInt(0), 1);
  }
  NodeDb node(dir.File("state.db"));
  std::optional<StagingRow> row = node.store->GetStaging("v1");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, kStaged);
  EXPECT_EQ(row->device_number, "259:3");
  EXPECT_EQ(row->fs_type, "ext4");
  EXPECT_FALSE(row->block);
  EXPECT_FALSE(node.store->GetStaging("v2").has_value());
  EXPECT_EQ(node.store->ListStagings().size(), 1U);
}

// Every column of both node tables is read back into its own field after a reopen (the store
// reads a row's columns by position, in the order of its column lists).
TEST(NodeVolumeStore, EveryFieldOfBothRowKindsReadsBackAfterAReopen) {
  oxide::testing::TempDir dir;
  StagingRow staging = Staging("v1");  // then every field away from its default
  staging.state = kStaged;
  staging.capability = "block:::mode=1";
  staging.block = true;
  staging.fs_type = "xfs";
  staging.device_name = "nvme1n1";
  staging.device_number = "259:3";
  staging.format_uuid = "7d0b6f0e-1d7c-4b8e-9a51-3f0c2a9e4d11";
  staging.encrypted = true;
  const PublicationRow publication{.target_path = "/t/a",
                                   .volume_id = "v1",
                                   .state = kPublished,
                                   .staging_path = "/stage/v1",
                                   .capability = "mount:xfs:0::mode=1",
                                   .readonly = true};
  {
    NodeDb node(dir.File("state.db"));
    node.store->PutStaging(staging);
    node.store->PutPublication(publication);
    ASSERT_TRUE(node.Durable().ok());
  }
  NodeDb node(dir.File("state.db"));
  auto staging_fields = [](const StagingRow& r) {
    return std::tie(r.volume_id, r.staging_path, r.state, r.capability, r.block, r.fs_type,
                    r.serial, r.device_name, r.device_number, r.format_uuid, r.encrypted);
  };
  std::optional<StagingRow> staging_read = node.store->GetStaging("v1");
  ASSERT_TRUE(staging_read.has_value());
  EXPECT_EQ(staging_fields(*staging_read), staging_fields(staging));
  auto publication_fields = [](const PublicationRow& r) {
    return std::tie(r.target_path, r.volume_id, r.state, r.staging_path, r.capability, r.readonly);
  };
  std::optional<PublicationRow> publication_read = node.store->GetPublication("/t/a");
  ASSERT_TRUE(publication_read.has_value());
  EXPECT_EQ(publication_fields(*publication_read), publication_fields(publication));
}

TEST(NodeVolumeStore, PublicationsByTargetAndByVolume) {
  oxide::testing::TempDir dir;
  NodeDb node(dir.File("state.db"));
  for (const char* target : {"/t/a", "/t/b"}) {
    node.store->PutPublication({.target_path = target,
                                .volume_id = "v1",
                                .state = kPublished,
                                .staging_path = "/stage/v1",
                                .capability = "c",
                                .readonly = true});
  }
  EXPECT_EQ(node.store->PublicationsOf("v1").size(), 2U);
  EXPECT_TRUE(node.store->PublicationsOf("v2").empty());
  std::optional<PublicationRow> one = node.store->GetPublication("/t/a");
  ASSERT_TRUE(one.has_value());
  EXPECT_TRUE(one->readonly);
  node.store->DeletePublication("/t/a");
  EXPECT_EQ(node.store->ListPublications().size(), 1U);
  ASSERT_TRUE(node.Durable().ok());
}

}  // namespace
}  // namespace oxide::store
