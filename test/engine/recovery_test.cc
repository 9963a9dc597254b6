// Crash recovery: journal entries left open by a plugin that died mid-operation are reconciled
// with Oxide at the next start, for every kind of operation and every outcome Oxide can show.
#include <gtest/gtest.h>

#include "engine/disk_naming.h"
#include "engine_fixture.h"
#include "support/faulty_vfs.h"

namespace engine_test {
namespace {

using oxide::StatusCode;
using oxide::store::VolumeRow;

VolumeRow RowFor(const Disk& disk, const std::string& state, const std::string& node = "") {
  return {.disk_name = disk.name,
          .volume_id = disk.id,
          .co_name = CoNameFromDescription(disk.description).value_or(""),
          .size = disk.size,
          .block_size = disk.block_size,
          .state = state,
          .node_id = node};
}

class RecoveryTest : public EngineTest {
 protected:
  // Restarts and reconciles; returns the one journal entry's final state.
  std::string Recover() {
    Restart();
    EXPECT_EQ(engine_->RecoverUnfinished(), 1u);
    EXPECT_TRUE(Settle());
    EXPECT_EQ(PendingEntries(), 0);
    return EntryState(1);
  }
};

TEST_F(RecoveryTest, ACreateWhoseDiskExistsIsCompleted) {
  auto disk = Await<Disk>([&](auto done) {
    client().CreateDisk({.name = DiskNameFor("pvc-r1"),
                         .description = DescriptionFor("pvc-r1", "", ""),
                         .size = kGiB,
                         .block_size = 4096,
                         .snapshot_id = ""},
                        std::move(done));
  });
  ASSERT_TRUE(disk.ok());
  CrashedWith("create", disk->name, R"({"co_name":"pvc-r1"})",
              VolumeRow{.disk_name = disk->name,
                        .volume_id = "",
                        .co_name = "pvc-r1",
                        .size = kGiB,
                        .block_size = 4096,
                        .state = "CREATING",
                        .node_id = ""});
  EXPECT_EQ(Recover(), "done");
  auto row = store_->FindByDiskName(disk->name);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, "CREATED");
  EXPECT_EQ(row->volume_id, disk->id);
}

TEST_F(RecoveryTest, ACreateThatNeverReachedOxideIsRolledBack) {
  std::string name = DiskNameFor("pvc-r2");
  CrashedWith("create", name, R"({"co_name":"pvc-r2"})",
              VolumeRow{.disk_name = name,
                        .volume_id = "",
                        .co_name = "pvc-r2",
                        .size = kGiB,
                        .block_size = 4096,
                        .state = "CREATING",
                        .node_id = ""});
  EXPECT_EQ(Recover(), "rolled_back");
  EXPECT_FALSE(store_->FindByDiskName(name).has_value());
  EXPECT_EQ(CountRequests("POST", "disk_create"), 0) << "recovery never creates";
}

TEST_F(RecoveryTest, ACreateStillRunningInOxideIsWaitedFor) {
  control().put("/__sim/config", {{"create_delay_ms", 500}, {"async", true}});
  auto disk = Await<Disk>([&](auto done) {
    client().CreateDisk({.name = DiskNameFor("pvc-r3"),
                         .description = DescriptionFor("pvc-r3", "", ""),
                         .size = kGiB,
                         .block_size = 4096,
                         .snapshot_id = ""},
                        std::move(done));
  });
  ASSERT_TRUE(disk.ok());
  ASSERT_EQ(disk->state.status, oxide::backend::DiskStatus::kCreating);
  CrashedWith("create", disk->name, R"({"co_name":"pvc-r3"})", std::nullopt);
  EXPECT_EQ(Recover(), "done");
  EXPECT_EQ(store_->FindByDiskName(disk->name)->state, "CREATED");
}

TEST_F(RecoveryTest, ADeleteThatHappenedIsCompleted) {
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r4"));
  CrashedWith("delete", disk->id, "{}", RowFor(*disk, "DELETING"));
  ASSERT_TRUE(AwaitStatus([&](auto done) { client().DeleteDisk(disk->id, std::move(done)); }).ok());
  EXPECT_EQ(Recover(), "done");
  EXPECT_FALSE(store_->FindByVolumeId(disk->id).has_value());
}

TEST_F(RecoveryTest, ADeleteThatDidNotHappenIsRolledBack) {
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r5"));
  CrashedWith("delete", disk->id, "{}", RowFor(*disk, "DELETING"));
  EXPECT_EQ(Recover(), "rolled_back");
  EXPECT_EQ(store_->FindByVolumeId(disk->id)->state, "CREATED");
  EXPECT_TRUE(GetDisk(disk->id).ok()) << "recovery never deletes";
}

TEST_F(RecoveryTest, AnEntryForADiskOfAnotherProjectIsRolledBackAndLeavesItAlone) {
  ASSERT_EQ(control().post("/__sim/projects", {{"name", "other"}}).status, 201);
  sim_test::Reply made = control().post("/v1/disks?project=other", sim_test::blank_disk("theirs"));
  ASSERT_EQ(made.status, 201) << made.body;
  const std::string foreign = made.json()["id"];
  // A DeleteVolume of a foreign id, journaled, and the plugin killed before its lookup.
  CrashedWith("delete", foreign, "{}", std::nullopt);
  EXPECT_EQ(Recover(), "rolled_back");
  EXPECT_FALSE(store_->FindByVolumeId(foreign).has_value());
  EXPECT_EQ(control().get("/v1/disks/" + foreign).status, 200) << "recovery deleted it";
}

TEST_F(RecoveryTest, APublishThatHappenedIsCompleted) {
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r6"));
  CrashedWith("publish", disk->id, R"({"node":")" + node + R"("})",
              RowFor(*disk, "PUBLISHING", node));
  AttachDirect(node, disk->id);
  EXPECT_EQ(Recover(), "done");
  auto row = store_->FindByVolumeId(disk->id);
  EXPECT_EQ(row->state, "NODE_READY");
  EXPECT_EQ(row->node_id, node);
}

TEST_F(RecoveryTest, APublishThatDidNotHappenIsRolledBack) {
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r7"));
  CrashedWith("publish", disk->id, R"({"node":")" + node + R"("})",
              RowFor(*disk, "PUBLISHING", node));
  EXPECT_EQ(Recover(), "rolled_back");
  EXPECT_EQ(store_->FindByVolumeId(disk->id)->state, "CREATED");
  EXPECT_EQ(GetDisk(disk->id)->state.status, oxide::backend::DiskStatus::kDetached)
      << "recovery never attaches";
}

TEST_F(RecoveryTest, APublishWithDamagedArgumentsIsFailedNotClaimedAndItsRowFollowsOxide) {
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r6d"));
  CrashedWith("publish", disk->id, R"({"node":42})", RowFor(*disk, "PUBLISHING", node));
  AttachDirect(node, disk->id);
  EXPECT_EQ(Recover(), "failed") << "the entry's node is unknown: neither done nor rolled back";
  auto row = store_->FindByVolumeId(disk->id);
  EXPECT_EQ(row->state, "NODE_READY");
  EXPECT_EQ(row->node_id, node);
}

TEST_F(RecoveryTest, AnUnpublishThatHappenedIsCompleted) {
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r8"));
  std::string node = ControlInstance("node-1", "stopped");
  CrashedWith("unpublish", disk->id, R"({"node":")" + node + R"("})",
              RowFor(*disk, "UNPUBLISHING", node));
  EXPECT_EQ(Recover(), "done");
  EXPECT_EQ(store_->FindByVolumeId(disk->id)->state, "CREATED");
}

TEST_F(RecoveryTest, AnUnpublishThatDidNotHappenIsRolledBack) {
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r9"));
  AttachDirect(node, disk->id);
  CrashedWith("unpublish", disk->id, R"({"node":")" + node + R"("})",
              RowFor(*disk, "UNPUBLISHING", node));
  EXPECT_EQ(Recover(), "rolled_back");
  auto row = store_->FindByVolumeId(disk->id);
  EXPECT_EQ(row->state, "NODE_READY");
  EXPECT_EQ(row->node_id, node);
}

TEST_F(RecoveryTest, AVolumeUnderRecoveryIsBusyAndOxideOutagesAreRetried) {
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r10"));
  CrashedWith("delete", disk->id, "{}", RowFor(*disk, "DELETING"));
  SetFaults({{{"operation", "disk_view"}, {"error_503", 1.0}}});
  Restart();
  ASSERT_EQ(engine_->RecoverUnfinished(), 1u);
  std::optional<oxide::Status> refused;
  engine_->Delete(disk->id, [&](const OperationResult& r) { refused = r.status(); });
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code(), StatusCode::kAborted);
  EXPECT_NE(refused->message().find("recovery of delete"), std::string::npos);
  Elapse(std::chrono::milliseconds(600));
  EXPECT_EQ(PendingEntries(), 1) << "still open while Oxide is unavailable";
  SetFaults(nlohmann::json::array());
  ASSERT_TRUE(Settle());
  EXPECT_EQ(PendingEntries(), 0);
  EXPECT_TRUE(DeleteNow(disk->id).ok());
}

TEST_F(RecoveryTest, OnlyTheNewestOfSeveralOpenEntriesOfAVolumeDecides) {
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r11"));
  CrashedWith("publish", disk->id, R"({"node":")" + node + R"("})", std::nullopt);
  CrashedWith("unpublish", disk->id, R"({"node":")" + node + R"("})",
              RowFor(*disk, "UNPUBLISHING", node));
  Restart();
  EXPECT_EQ(engine_->RecoverUnfinished(), 2u);
  ASSERT_TRUE(Settle());
  EXPECT_EQ(EntryState(1), "rolled_back");
  EXPECT_EQ(EntryState(2), "done");
  EXPECT_EQ(store_->FindByVolumeId(disk->id)->state, "CREATED");
}

// One lock per volume at recovery too: a create's entry is keyed by the disk name, a delete's by
// the volume id; the newer (the delete) decides and the older is closed as superseded.
TEST_F(RecoveryTest, AnOlderEntryUnderTheVolumesOtherNameIsSuperseded) {
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r12"));
  CrashedWith("create", disk->name, R"({"co_name":"pvc-r12"})", RowFor(*disk, "CREATED"));
  CrashedWith("delete", disk->id, "{}", RowFor(*disk, "DELETING"));
  Restart();
  EXPECT_EQ(engine_->RecoverUnfinished(), 2u);
  ASSERT_TRUE(Settle());
  EXPECT_EQ(EntryState(1), "rolled_back") << "superseded, not completed as a create";
  EXPECT_EQ(EntryState(2), "rolled_back") << "the disk is still there: the delete did not happen";
  EXPECT_EQ(store_->FindByVolumeId(disk->id)->state, "CREATED");
  EXPECT_EQ(PendingEntries(), 0);
}

// Closing a superseded entry is a write like any other: when the disk is full at that moment, the
// entry stays pending and is reconciled on its own once writes succeed, not at the next start.
TEST_F(RecoveryTest, ASupersededEntryWhoseCloseIsNotRecordedIsReconciledLater) {
  oxide::testing::FaultyVfs::Install();
  vfs_ = oxide::testing::FaultyVfs::kName;
  Restart();
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk(DiskNameFor("pvc-r13"));
  CrashedWith("publish", disk->id, R"({"node":")" + node + R"("})", std::nullopt);
  CrashedWith("unpublish", disk->id, R"({"node":")" + node + R"("})",
              RowFor(*disk, "UNPUBLISHING", node));
  Restart();
  oxide::testing::FaultyVfs::FailWrites(true);
  EXPECT_EQ(engine_->RecoverUnfinished(), 2u);
  ASSERT_TRUE(RunUntil([&] { return commit_->stats().failed > 0; }));
  oxide::testing::FaultyVfs::FailWrites(false);
  ASSERT_TRUE(RunUntil([&] {
    return PendingEntries() == 0 && engine_->tracker().in_flight() == 0;
  })) << PendingEntries()
      << " entries still pending";
  EXPECT_EQ(EntryState(1), "rolled_back");
  EXPECT_EQ(EntryState(2), "done");
}

}  // namespace
}  // namespace engine_test
