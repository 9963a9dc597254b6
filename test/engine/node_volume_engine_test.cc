// The node volume engine without root: the real engine, state table, store (a real SQLite file)
// and group commit on a real loop, with FakeNodeOs in place of the machine, so that every OS
// call can fail on demand (mkfs, EBUSY, ENOSPC, a device vanishing mid-stage) or be held in flight
// while other calls arrive. The real-mount tests of the same paths are in test/node (root).
#include "engine/node_volume_engine.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "engine/node_volume_state.h"
#include "fake_node_os.h"
#include "store/node_volume_store.h"
#include "support/manual_clock.h"
#include "support/state_db_fixture.h"

namespace engine_test {
namespace {

using namespace oxide::engine;  // NOLINT(google-build-using-namespace): test code
using oxide::Status;
using oxide::StatusCode;
using oxide::StatusOr;
using Call = FakeNodeOs::Call;

constexpr const char* kSerial = "csi-0123456789abcdef";

class NodeVolumeEngineTest : public oxide::testing::StateDbFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenStateDb());
    store_ = std::make_unique<oxide::store::NodeVolumeStore>(db_.get(), commit_.get());
    // No wait: a device that is not there is NOT_FOUND at once (the waiting itself is
    // DeviceWaiter's and is tested with the real plugin in test/node).
    waiter_ = std::make_unique<DeviceWaiter>(loop_.uv(), &clock_, &os_, std::chrono::seconds(0));
    engine_ = std::make_unique<NodeVolumeEngine>(loop_.uv(), &os_, waiter_.get(), store_.get(),
                                                 commit_.get());
    os_.AddDevice(kSerial, "nvme1n1", 1);
  }
  void TearDown() override {
    engine_.reset();
    waiter_.reset();
    store_.reset();
    StateDbFixture::TearDown();
  }

  Status Wait(const std::optional<Status>& result) {
    RunUntil([&] { return result.has_value(); });
    return *result;
  }
  NodeVolumeEngine::Done Into(std::optional<Status>& result) {
    return [&result](const Status& outcome) { result = outcome; };
  }

  StageSpec Stage(const std::string& fs_type = "ext4") {
    return {
        .volume_id = "vol-1",
        .staging_path = dir_.File("staging"),
        .serial = kSerial,
        .access = {.block = false, .fs_type = fs_type, .options = {}, .key = "mount:" + fs_type}};
  }
  PublishSpec Publish() {
    return {.volume_id = "vol-1",
            .target_path = dir_.File("target"),
            .staging_path = dir_.File("staging"),
            .access = {.block = false, .fs_type = "ext4", .options = {}, .key = "mount:ext4"},
            .readonly = false,
            .single_writer = true};
  }
  Status StageNow(const StageSpec& spec) {
    std::optional<Status> result;
    engine_->Stage(spec, Into(result));
    return Wait(result);
  }
  // The staging row's state as the database file holds it ("none": no row).
  std::string DurableStagingState() {
    return DurableText("SELECT state FROM node_stagings WHERE volume_id = ?1", "vol-1");
  }
  std::string PublicationState() {
    auto row = store_->GetPublication(dir_.File("target"));
    return row ? row->state : "none";
  }

  oxide::testing::ManualClock clock_;  // no timer runs: the device wait is 0 s
  FakeNodeOs os_{[this] { loop_.Post([] {}); }};
  std::unique_ptr<oxide::store::NodeVolumeStore> store_;
  std::unique_ptr<DeviceWaiter> waiter_;
  std::unique_ptr<NodeVolumeEngine> engine_;
};

TEST(NodeVolumeStateTable, EveryRowChangeIsATransitionOfTheTable) {
  using S = NodeVolumeState;
  using E = NodeVolumeEvent;
  EXPECT_EQ(*NextNodeState(std::nullopt, E::kStageRequested), S::kStaging);
  EXPECT_EQ(*NextNodeState(S::kStaging, E::kFormatIntended), S::kFormatting);
  EXPECT_EQ(*NextNodeState(S::kFormatting, E::kStaged), S::kStaged);
  EXPECT_EQ(*NextNodeState(S::kFormatting, E::kStageFailed), S::kFormatting);
  EXPECT_EQ(*NextNodeState(S::kStaging, E::kStageFailed), std::nullopt);
  EXPECT_EQ(*NextNodeState(S::kUnstaging, E::kUnstaged), std::nullopt);
  EXPECT_EQ(*NextNodeState(S::kPublished, E::kMountVanished), S::kStale);
  StatusOr<NodeRowState> illegal = NextNodeState(S::kStaged, E::kPublished);
  ASSERT_FALSE(illegal.ok());
  EXPECT_EQ(illegal.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(illegal.status().message(),
            "illegal node volume state transition: published with staged");
  EXPECT_FALSE(NextNodeState(std::nullopt, E::kUnstaged).ok());
  for (auto state : {S::kStaging, S::kFormatting, S::kStaged, S::kUnstaging, S::kPublishing,
                     S::kPublished, S::kUnpublishing, S::kStale}) {
    EXPECT_EQ(NodeVolumeStateFromName(NodeVolumeStateName(state)), state);
  }
  EXPECT_EQ(NodeVolumeStateFromName("VOL_READY"), std::nullopt);
}

TEST_F(NodeVolumeEngineTest, AStageFormatsABlankDeviceAndItsRowIsDurableBeforeTheAnswer) {
  std::optional<Status> result;
  engine_->Stage(Stage(), Into(result));
  ASSERT_TRUE(Wait(result).ok()) << result->ToString();
  EXPECT_EQ(os_.format_calls(), std::vector<std::string>{"format"});
  EXPECT_EQ(DurableStagingState(), "staged");
  EXPECT_EQ(store_->GetStaging("vol-1")->device_number, "259:1");
  EXPECT_TRUE(StageNow(Stage()).ok()) << "a repeat of a finished stage is OK";
  EXPECT_EQ(os_.count(Call::kFormatAndMount), 1);
  Status other = StageNow(Stage("xfs"));
  EXPECT_EQ(other.code(), StatusCode::kAlreadyExists) << other.ToString();
}

TEST_F(NodeVolumeEngineTest, AnIdenticalRetryJoinsTheCallInFlightAndOtherCallsAreAborted) {
  os_.HoldNext(Call::kFormatAndMount);
  std::optional<Status> first, retry, unstage, publish, other_stage;
  engine_->Stage(Stage(), Into(first));
  RunUntil([&] { return os_.holding(); });
  engine_->Stage(Stage(), Into(retry));
  engine_->Unstage("vol-1", dir_.File("staging"), Into(unstage));
  engine_->Publish(Publish(), Into(publish));
  engine_->Stage(Stage("xfs"), Into(other_stage));
  EXPECT_FALSE(retry.has_value()) << "the retry waits for the call it joined";
  ASSERT_TRUE(unstage.has_value());
  EXPECT_EQ(unstage->code(), StatusCode::kAborted);
  EXPECT_EQ(unstage->message(),
            "operation NodeStageVolume pending for volume vol-1; retry when it has finished");
  ASSERT_TRUE(publish.has_value());
  EXPECT_EQ(publish->code(), StatusCode::kAborted);
  ASSERT_TRUE(other_stage.has_value());
  EXPECT_EQ(other_stage->code(), StatusCode::kAborted);
  EXPECT_EQ(other_stage->message(),
            "operation NodeStageVolume with other arguments pending for volume vol-1; retry "
            "when it has finished");
  os_.Release();
  EXPECT_TRUE(Wait(first).ok());
  EXPECT_TRUE(Wait(retry).ok());
  EXPECT_EQ(os_.count(Call::kFormatAndMount), 1);
  EXPECT_EQ(engine_->tracker().joined(), 1U);
  EXPECT_EQ(engine_->tracker().in_flight(), 0U);
}

TEST_F(NodeVolumeEngineTest, AFailedMkfsKeepsTheFormatIntentAndTheRetryFormatsAgain) {
  os_.FailNext(Call::kFormatAndMount, oxide::Internal("mkfs.ext4 exited with status 1"));
  Status failed = StageNow(Stage());
  EXPECT_EQ(failed.code(), StatusCode::kInternal);
  EXPECT_EQ(DurableStagingState(), "formatting") << "the intent stays for the retry";
  EXPECT_TRUE(StageNow(Stage()).ok());
  EXPECT_EQ(os_.format_calls(), (std::vector<std::string>{"format", "format"}));
  EXPECT_EQ(DurableStagingState(), "staged");
}

TEST_F(NodeVolumeEngineTest, ADeviceVanishingMidStageFailsTheStageAndLeavesNoRow) {
  os_.SetPlan(oxide::node::StagePlan::kMount);  // it holds a filesystem: no format intent
  os_.HoldNext(Call::kPlanStaging);
  std::optional<Status> result;
  engine_->Stage(Stage(), Into(result));
  RunUntil([&] { return os_.holding(); });
  EXPECT_EQ(store_->GetStaging("vol-1")->state, "staging");
  os_.RemoveDevice(kSerial);
  os_.Release();
  Status failed = Wait(result);
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(failed.message(), "device /dev/nvme1n1 vanished");
  EXPECT_EQ(DurableStagingState(), "none");
  EXPECT_EQ(StageNow(Stage()).code(), StatusCode::kNotFound) << "gone: NOT_FOUND, no row";
  EXPECT_EQ(DurableStagingState(), "none");
}

TEST_F(NodeVolumeEngineTest, AMountThatLandsLateIsReportedAbnormalUntilItHas) {
  os_.HoldNext(Call::kFormatAndMount);
  std::optional<Status> staged;
  engine_->Stage(Stage(), Into(staged));
  RunUntil([&] { return os_.holding() && store_->GetStaging("vol-1")->device_number == "259:1"; });
  std::optional<StatusOr<VolumeHealth>> before;
  engine_->Health("vol-1", dir_.File("staging"), [&](StatusOr<VolumeHealth> h) { before = h; });
  RunUntil([&] { return before.has_value(); });
  ASSERT_TRUE(before->ok());
  EXPECT_EQ((*before)->problem, dir_.File("staging") + " is not mounted");
  os_.Release();
  ASSERT_TRUE(Wait(staged).ok());
  std::optional<StatusOr<VolumeHealth>> after;
  engine_->Health("vol-1", dir_.File("staging"), [&](StatusOr<VolumeHealth> h) { after = h; });
  RunUntil([&] { return after.has_value(); });
  ASSERT_TRUE(after->ok());
  EXPECT_EQ((*after)->problem, "");
  ASSERT_TRUE((*after)->usage.has_value());
  EXPECT_EQ((*after)->usage->inodes_used, 11);
  std::optional<StatusOr<VolumeHealth>> unknown;
  engine_->Health("vol-2", dir_.File("staging"), [&](StatusOr<VolumeHealth> h) { unknown = h; });
  RunUntil([&] { return unknown.has_value(); });
  EXPECT_EQ(unknown->status().code(), StatusCode::kNotFound);
}

TEST_F(NodeVolumeEngineTest, AnUnmountRefusedWithEbusyLeavesTheVolumeStaged) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.FailNext(Call::kUnmountAndRemove,
               oxide::FailedPrecondition("umount " + dir_.File("staging") + ": EBUSY"));
  std::optional<Status> busy;
  engine_->Unstage("vol-1", dir_.File("staging"), Into(busy));
  EXPECT_EQ(Wait(busy).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(DurableStagingState(), "staged");
  std::optional<Status> retried;
  engine_->Unstage("vol-1", dir_.File("staging"), Into(retried));
  EXPECT_TRUE(Wait(retried).ok());
  EXPECT_EQ(DurableStagingState(), "none");
  EXPECT_FALSE(os_.mounted(dir_.File("staging")));
}

TEST_F(NodeVolumeEngineTest, APublishThatFailsWithEnospcLeavesNoPublication) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.FailNext(Call::kPublishBind, oxide::Internal("mkdir " + dir_.File("target") +
                                                   ": No space left on device (ENOSPC)"));
  std::optional<Status> full;
  engine_->Publish(Publish(), Into(full));
  EXPECT_EQ(Wait(full).code(), StatusCode::kInternal);
  EXPECT_EQ(PublicationState(), "none");
  std::optional<Status> published, unstage_first, unpublished;
  engine_->Publish(Publish(), Into(published));
  EXPECT_TRUE(Wait(published).ok());
  EXPECT_EQ(PublicationState(), "published");
  engine_->Unstage("vol-1", dir_.File("staging"), Into(unstage_first));
  EXPECT_EQ(Wait(unstage_first).code(), StatusCode::kFailedPrecondition);
  engine_->Unpublish("vol-1", dir_.File("target"), Into(unpublished));
  EXPECT_TRUE(Wait(unpublished).ok());
  EXPECT_EQ(PublicationState(), "none");
}

TEST_F(NodeVolumeEngineTest, ADeviceThatIsNotThereIsNotFoundAndLeavesNoRow) {
  os_.RemoveDevice(kSerial);
  Status missing = StageNow(Stage());
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find(kSerial), std::string::npos) << missing.message();
  EXPECT_EQ(DurableStagingState(), "none");
  EXPECT_EQ(os_.count(Call::kFormatAndMount), 0);
}

}  // namespace
}  // namespace engine_test
