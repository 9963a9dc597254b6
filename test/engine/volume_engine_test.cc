// The volume engine against the real simulator: each operation's journal and state records,
// idempotency, joining and ABORTED, reverts on Oxide errors, adoption of volumes this replica
// never saw, and operations that outlive their caller.
#include <gtest/gtest.h>

#include "engine/disk_naming.h"
#include "engine/volume_state.h"
#include "engine_fixture.h"
#include "support/faulty_vfs.h"

namespace engine_test {
namespace {

using oxide::StatusCode;

TEST_F(EngineTest, CreateMakesOneDetachedDiskAndRecordsIt) {
  auto created = CreateNow(Spec("pvc-a", 2));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->name, DiskNameFor("pvc-a"));
  EXPECT_EQ(created->size, 2 * kGiB);
  EXPECT_EQ(created->state.status, oxide::backend::DiskStatus::kDetached);
  EXPECT_EQ(CoNameFromDescription(created->description), "pvc-a");
  auto row = store_->FindByVolumeId(created->id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, "CREATED");
  EXPECT_EQ(row->co_name, "pvc-a");
  EXPECT_EQ(PendingEntries(), 0);
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
}

TEST_F(EngineTest, IdenticalConcurrentCreatesJoinOneOperation) {
  std::vector<OperationResult> results;
  for (int i = 0; i < 5; ++i) {
    engine_->Create(Spec("pvc-join"), "same",
                    [&](const OperationResult& r) { results.push_back(r); });
  }
  std::optional<oxide::Status> other;
  engine_->Create(Spec("pvc-join", 3), "different",
                  [&](const OperationResult& r) { other = r.status(); });
  ASSERT_TRUE(other.has_value()) << "a different call is refused at once";
  EXPECT_EQ(other->code(), StatusCode::kAborted);
  EXPECT_NE(other->message().find("CreateVolume"), std::string::npos);
  ASSERT_TRUE(RunUntil([&] { return results.size() == 5; }));
  for (const auto& r : results) {
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->id, results[0]->id);
  }
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
}

TEST_F(EngineTest, ARetryAfterCompletionFindsTheSameDisk) {
  auto first = CreateNow(Spec("pvc-again"));
  auto second = CreateNow(Spec("pvc-again"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->id, second->id);
  auto bigger = CreateNow(Spec("pvc-again", 4));
  ASSERT_FALSE(bigger.ok());
  EXPECT_EQ(bigger.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(bigger.status().message().find("below the required 4 GiB"), std::string::npos);
  CreateSpec other_block = Spec("pvc-again");
  other_block.block_size = 512;
  other_block.block_size_requested = true;
  EXPECT_EQ(CreateNow(other_block).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->FindByVolumeId(first->id)->state, "CREATED") << "the volume is untouched";
}

TEST_F(EngineTest, ADiskOfTheSameNameThatIsNotOursIsNeverHandedOut) {
  ASSERT_TRUE(CreateBlankDisk(DiskNameFor("pvc-taken")).ok());  // description "test disk"
  auto created = CreateNow(Spec("pvc-taken"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(created.status().message().find("not made by this plugin"), std::string::npos);
  EXPECT_FALSE(store_->FindByDiskName(DiskNameFor("pvc-taken")).has_value());
}

TEST_F(EngineTest, ARefusedCreateLeavesNoRecord) {
  control().put("/__sim/config", {{"storage_quota", 1 * kGiB}});
  auto created = CreateNow(Spec("pvc-quota", 2));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(store_->FindByDiskName(DiskNameFor("pvc-quota")).has_value());
  EXPECT_EQ(PendingEntries(), 0);
}

TEST_F(EngineTest, ACreateWhoseAnswerIsLostIsResolvedByLookingTheDiskUp) {
  // The POST is carried out but its answer is lost (dropped connection after the effect is not
  // modelled; a 503 before the effect is): either way the engine asks Oxide before answering.
  SetFaults({{{"operation", "disk_create"}, {"error_503", 1.0}}});
  auto created = CreateNow(Spec("pvc-lost"));
  ASSERT_FALSE(created.ok());
  EXPECT_EQ(created.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1) << "a POST is never repeated blindly";
  EXPECT_EQ(CountRequests("GET", "disk_view"), 1);
  EXPECT_FALSE(store_->FindByDiskName(DiskNameFor("pvc-lost")).has_value());
  SetFaults(nlohmann::json::array());
  EXPECT_TRUE(CreateNow(Spec("pvc-lost")).ok());
}

// The disk fills up between a create's journaled intent and its outcome: the caller learns
// exactly that, and once the disk takes writes again the entry is reconciled with Oxide without
// a restart or another call.
TEST_F(EngineTest, AnOutcomeThatCouldNotBeRecordedIsReconciledOnceTheDiskTakesWritesAgain) {
  oxide::testing::FaultyVfs::Install();
  vfs_ = oxide::testing::FaultyVfs::kName;
  Restart();
  SetFaults({{{"operation", "disk_create"}, {"latency_ms", 300}}});
  CreateSpec spec = Spec("pvc-full-disk");
  std::optional<OperationResult> result;
  const uint64_t commits = commit_->stats().commits;
  engine_->Create(spec, "fp", [&](const OperationResult& r) { result = r; });
  ASSERT_TRUE(RunUntil([&] { return commit_->stats().commits > commits; }));  // intent durable
  oxide::testing::FaultyVfs::FailWrites(true);  // then the disk is full
  ASSERT_TRUE(RunUntil([&] { return result.has_value(); }));
  oxide::testing::FaultyVfs::FailWrites(false);
  ASSERT_FALSE(result->ok());
  EXPECT_EQ(result->status().code(), StatusCode::kUnavailable);
  EXPECT_NE(result->status().message().find("its outcome could not be recorded"), std::string::npos)
      << result->status().message();
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1) << "Oxide made the disk";
  ASSERT_TRUE(RunUntil([&] {
    return PendingEntries() == 0 && !engine_->tracker().Busy(spec.disk_name);
  }));  // reconciled and recorded
  std::optional<oxide::store::VolumeRow> row = store_->FindByDiskName(spec.disk_name);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, VolumeStateName(VolumeState::kCreated));
  EXPECT_TRUE(db_->Health().ok());
  auto retried = CreateNow(spec);
  EXPECT_TRUE(retried.ok()) << "the retry finds the volume: " << retried.status().ToString();
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
}

TEST_F(EngineTest, ACreateWaitsWhileOxideReportsTheDiskCreating) {
  control().put("/__sim/config", {{"create_delay_ms", 300}, {"async", true}});
  auto created = CreateNow(Spec("pvc-slow"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->state.status, oxide::backend::DiskStatus::kDetached);
  EXPECT_GE(CountRequests("GET", "disk_view"), 2) << "polled until detached";
}

TEST_F(EngineTest, PublishUnpublishDeleteWalkTheStateMachine) {
  std::string node = ControlInstance("node-1", "stopped");
  auto created = CreateNow(Spec("pvc-life"));
  ASSERT_TRUE(created.ok());
  auto published = PublishNow(created->id, node);
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  EXPECT_EQ(published->state.instance, node);
  EXPECT_EQ(store_->FindByVolumeId(created->id)->state, "NODE_READY");
  EXPECT_EQ(store_->FindByVolumeId(created->id)->node_id, node);
  EXPECT_TRUE(PublishNow(created->id, node).ok()) << "idempotent";

  auto refused = DeleteNow(created->id);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->FindByVolumeId(created->id)->state, "NODE_READY") << "reverted";

  ASSERT_TRUE(UnpublishNow(created->id, node).ok());
  EXPECT_EQ(store_->FindByVolumeId(created->id)->state, "CREATED");
  EXPECT_TRUE(UnpublishNow(created->id, node).ok()) << "idempotent";
  ASSERT_TRUE(DeleteNow(created->id).ok());
  EXPECT_FALSE(store_->FindByVolumeId(created->id).has_value());
  EXPECT_TRUE(DeleteNow(created->id).ok()) << "idempotent";
  EXPECT_EQ(GetDisk(created->id).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(PendingEntries(), 0);
}

TEST_F(EngineTest, PublishToASecondInstanceIsRefusedAndTheRecordKept) {
  std::string one = ControlInstance("node-1", "stopped");
  std::string two = ControlInstance("node-2", "stopped");
  auto created = CreateNow(Spec("pvc-two"));
  ASSERT_TRUE(PublishNow(created->id, one).ok());
  auto second = PublishNow(created->id, two);
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("another instance"), std::string::npos);
  auto row = store_->FindByVolumeId(created->id);
  EXPECT_EQ(row->state, "NODE_READY");
  EXPECT_EQ(row->node_id, one);
  // Unpublishing from the instance that does not hold it succeeds and changes nothing.
  EXPECT_TRUE(UnpublishNow(created->id, two).ok());
  EXPECT_EQ(GetDisk(created->id)->state.instance, one);
}

TEST_F(EngineTest, UnpublishWithoutANodeDetachesFromWhicheverHoldsIt) {
  std::string node = ControlInstance("node-1", "stopped");
  auto created = CreateNow(Spec("pvc-any"));
  ASSERT_TRUE(PublishNow(created->id, node).ok());
  ASSERT_TRUE(UnpublishNow(created->id, "").ok());
  EXPECT_EQ(GetDisk(created->id)->state.status, oxide::backend::DiskStatus::kDetached);
  EXPECT_EQ(store_->FindByVolumeId(created->id)->state, "CREATED");
}

TEST_F(EngineTest, VolumesThisReplicaNeverSawAreAdoptedFromOxide) {
  std::string node = ControlInstance("node-1", "stopped");
  auto disk = CreateBlankDisk("static-disk");  // e.g. made by another replica, or by hand
  ASSERT_TRUE(disk.ok());
  auto published = PublishNow(disk->id, node);
  ASSERT_TRUE(published.ok()) << published.status().ToString();
  auto row = store_->FindByVolumeId(disk->id);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, "NODE_READY");
  auto missing = PublishNow("00000000-0000-4000-8000-000000000000", node);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(UnpublishNow("00000000-0000-4000-8000-000000000000", "").ok());
}

TEST_F(EngineTest, AttachingToARunningInstanceExplainsTheOxideRule) {
  std::string node = ControlInstance("node-running", "running");
  auto created = CreateNow(Spec("pvc-run"));
  auto published = PublishNow(created->id, node);
  EXPECT_EQ(published.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(published.status().message().find("no hot-plug"), std::string::npos);
  EXPECT_EQ(store_->FindByVolumeId(created->id)->state, "CREATED");
}

TEST_F(EngineTest, TheThirteenthDiskOfAnInstanceIsResourceExhausted) {
  std::string node = ControlInstance("node-full", "stopped");
  for (int i = 0; i < 12; ++i) {
    auto created = CreateNow(Spec("pvc-full-" + std::to_string(i)));
    ASSERT_TRUE(PublishNow(created->id, node).ok()) << i;
  }
  auto created = CreateNow(Spec("pvc-full-12"));
  EXPECT_EQ(PublishNow(created->id, node).status().code(), StatusCode::kResourceExhausted);
}

TEST_F(EngineTest, AnOperationRunsToTheEndWithoutItsCaller) {
  // The caller gives up (its RPC deadline passed); the operation still completes and records
  // its outcome, and the retry finds the finished volume.
  control().put("/__sim/config", {{"create_delay_ms", 400}});
  engine_->Create(Spec("pvc-orphan"), "fp", [](const OperationResult&) {});
  ASSERT_TRUE(Settle());
  auto row = store_->FindByDiskName(DiskNameFor("pvc-orphan"));
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->state, "CREATED");
  EXPECT_EQ(PendingEntries(), 0);
  control().put("/__sim/config", {{"create_delay_ms", 0}});
  EXPECT_TRUE(CreateNow(Spec("pvc-orphan")).ok());
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1) << "the retry looked the recorded disk up";
}

}  // namespace
}  // namespace engine_test
