// Unit tests of the node tables on a real SQLite file: rows survive a reopen, states change,
// deletes, lookups by volume.
#include <gtest/gtest.h>

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
          .device_number = ""};
}

TEST(NodeVolumeStore, StagingRowsRoundTripAndSurviveAReopen) {
  oxide::testing::TempDir dir;
  {
    auto db = StateDb::Open(dir.File("state.db"));
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    NodeVolumeStore store(db->get());
    StagingRow row = Staging("v1");
    ASSERT_TRUE(store.PutStaging(row).ok());
    row.state = kStaged;
    row.device_name = "nvme1n1";
    row.device_number = "259:3";
    ASSERT_TRUE(store.PutStaging(row).ok());
    ASSERT_TRUE(store.PutStaging(Staging("v2")).ok());
    ASSERT_TRUE(store.DeleteStaging("v2").ok());
  }
  auto db = StateDb::Open(dir.File("state.db"));
  ASSERT_TRUE(db.ok());
  NodeVolumeStore store(db->get());
  auto row = store.GetStaging("v1");
  ASSERT_TRUE(row.ok());
  ASSERT_TRUE(row->has_value());
  EXPECT_EQ((*row)->state, kStaged);
  EXPECT_EQ((*row)->device_number, "259:3");
  EXPECT_EQ((*row)->fs_type, "ext4");
  EXPECT_FALSE((*row)->block);
  EXPECT_FALSE(store.GetStaging("v2")->has_value());
  EXPECT_EQ(store.ListStagings()->size(), 1U);
}

TEST(NodeVolumeStore, PublicationsByTargetAndByVolume) {
  oxide::testing::TempDir dir;
  auto db = StateDb::Open(dir.File("state.db"));
  ASSERT_TRUE(db.ok());
  NodeVolumeStore store(db->get());
  for (const char* target : {"/t/a", "/t/b"}) {
    ASSERT_TRUE(store
                    .PutPublication({.target_path = target,
                                     .volume_id = "v1",
                                     .state = kPublished,
                                     .staging_path = "/stage/v1",
                                     .capability = "c",
                                     .readonly = true})
                    .ok());
  }
  EXPECT_EQ(store.PublicationsOf("v1")->size(), 2U);
  EXPECT_TRUE(store.PublicationsOf("v2")->empty());
  auto one = store.GetPublication("/t/a");
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_TRUE((*one)->readonly);
  ASSERT_TRUE(store.DeletePublication("/t/a").ok());
  EXPECT_EQ(store.ListPublications()->size(), 1U);
}

}  // namespace
}  // namespace oxide::store
