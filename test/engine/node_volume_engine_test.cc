// The node volume engine without root: the real engine, state table, store (a real SQLite file)
// and group commit on a real loop, with FakeNodeOs in place of the machine, so that every OS
// call can fail on demand (mkfs, EBUSY, ENOSPC, a device vanishing mid-stage) or be held in flight
// while other calls arrive. The real-mount tests of the same paths are in test/node (root).
#include "engine/node_volume_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/node_os_work.h"
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
constexpr const char* kOtherSerial = "csi-fedcba9876543210";

class NodeVolumeEngineTest : public oxide::testing::StateDbFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(OpenStateDb());
    store_ = std::make_unique<oxide::store::NodeVolumeStore>(db_.get(), commit_.get());
    // No wait: a device that is not there is NOT_FOUND at once (the waiting itself is
    // DeviceWaiter's and is tested with the real plugin in test/node).
    waiter_ = std::make_unique<DeviceWaiter>(loop_.uv(), &clock_, &os_, std::chrono::seconds(0));
    UseFormatLimit(2);
    os_.AddDevice(kSerial, "nvme1n1", 1);
  }
  void TearDown() override {
    engine_.reset();
    waiter_.reset();
    store_.reset();
    StateDbFixture::TearDown();
  }

  // A new engine with --max-concurrent-formats=`limit` (before any call).
  void UseFormatLimit(int limit) {
    engine_ = std::make_unique<NodeVolumeEngine>(loop_.uv(), &os_, waiter_.get(), store_.get(),
                                                 commit_.get(), limit);
  }

  Status Wait(const std::optional<Status>& result) {
    RunUntil([&] { return result.has_value(); });
    return *result;
  }
  // Each answer also wakes the loop: an answer given from a loop phase that runs before the
  // loop waits (GroupCommit answers a call that wrote nothing from its uv_prepare) would
  // otherwise leave RunUntil asleep in that wait.
  NodeVolumeEngine::Done Into(std::optional<Status>& result) {
    return [this, &result](const Status& outcome) {
      result = outcome;
      loop_.Post([] {});
    };
  }
  using HealthResult = std::optional<StatusOr<VolumeHealth>>;
  std::function<void(StatusOr<VolumeHealth>)> Into(HealthResult& result) {
    return [this, &result](StatusOr<VolumeHealth> health) {
      result = std::move(health);
      loop_.Post([] {});
    };
  }

  // A mount volume `volume_id` on the disk with `serial`, staged at <dir>/`staging`.
  StageSpec StageOf(const std::string& volume_id, const std::string& serial,
                    const std::string& staging, const std::string& fs_type = "ext4") {
    return {
        .volume_id = volume_id,
        .staging_path = dir_.File(staging),
        .serial = serial,
        .access = {.block = false, .fs_type = fs_type, .options = {}, .key = "mount:" + fs_type},
        .disk_bytes = std::nullopt,
        .encrypted = false,
        .passphrase = "",
        .fs_options = {}};
  }
  StageSpec Stage(const std::string& fs_type = "ext4") {
    return StageOf("vol-1", kSerial, "staging", fs_type);
  }
  StageSpec BlockStage() {
    return {.volume_id = "vol-1",
            .staging_path = dir_.File("staging"),
            .serial = kSerial,
            .access = {.block = true, .fs_type = "", .options = {}, .key = "block"},
            .disk_bytes = std::nullopt,
            .encrypted = false,
            .passphrase = "",
            .fs_options = {}};
  }
  PublishSpec Publish() {
    return {.volume_id = "vol-1",
            .target_path = dir_.File("target"),
            .staging_path = dir_.File("staging"),
            .access = {.block = false, .fs_type = "ext4", .options = {}, .key = "mount:ext4"},
            .readonly = false,
            .single_writer = true};
  }
  PublishSpec BlockPublish() {
    return {.volume_id = "vol-1",
            .target_path = dir_.File("target"),
            .staging_path = dir_.File("staging"),
            .access = {.block = true, .fs_type = "", .options = {}, .key = "block"},
            .readonly = false,
            .single_writer = true};
  }
  Status StageNow(const StageSpec& spec) {
    std::optional<Status> result;
    engine_->Stage(spec, Into(result));
    return Wait(result);
  }
  // A column of the staging row of `volume_id` as the database file holds it ("none": no row).
  std::string DurableStaging(const std::string& column, const std::string& volume_id = "vol-1") {
    return DurableText("SELECT " + column + " FROM node_stagings WHERE volume_id = ?1", volume_id);
  }
  // The staging row's state as the database file holds it ("none": no row).
  std::string DurableStagingState() { return DurableStaging("state"); }
  std::string PublicationState() {
    auto row = store_->GetPublication(dir_.File("target"));
    return row ? row->state : "none";
  }
  std::string DurablePublicationState() {
    return DurableText("SELECT state FROM node_publications WHERE target_path = ?1",
                       dir_.File("target"));
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
  EXPECT_EQ(DurableStaging("format_uuid"), "") << "the intent ends with the staging";
  EXPECT_EQ(store_->GetStaging("vol-1")->device_number, "259:1");
  EXPECT_TRUE(StageNow(Stage()).ok()) << "a repeat of a finished stage is OK";
  EXPECT_EQ(os_.count(Call::kVerifyStaged), 1) << "the repeat looks at the device and the mount";
  EXPECT_EQ(os_.count(Call::kCarryOutStaging), 1);
  Status other = StageNow(Stage("xfs"));
  EXPECT_EQ(other.code(), StatusCode::kAlreadyExists) << other.ToString();
}

TEST_F(NodeVolumeEngineTest, AnIdenticalRetryJoinsTheCallInFlightAndOtherCallsAreAborted) {
  os_.HoldNext(Call::kCarryOutStaging);
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
  EXPECT_EQ(os_.count(Call::kCarryOutStaging), 1);
  EXPECT_EQ(engine_->tracker().joined(), 1U);
  EXPECT_EQ(engine_->tracker().in_flight(), 0U);
}

TEST_F(NodeVolumeEngineTest, AFailedMkfsKeepsTheFormatIntentAndTheRetryFormatsAgain) {
  os_.FailNext(Call::kCarryOutStaging, oxide::Internal("mkfs.ext4 exited with status 1"));
  Status failed = StageNow(Stage());
  EXPECT_EQ(failed.code(), StatusCode::kInternal);
  EXPECT_EQ(DurableStagingState(), "formatting") << "the intent stays for the retry";
  EXPECT_TRUE(StageNow(Stage()).ok());
  EXPECT_EQ(os_.format_calls(), (std::vector<std::string>{"format", "reformat"}));
  EXPECT_EQ(DurableStagingState(), "staged");
}

TEST_F(NodeVolumeEngineTest, TheFormatIntentRecordsItsUuidBeforeMkfsAndTheRetryPassesItOn) {
  os_.HoldNext(Call::kCarryOutStaging);
  os_.FailNext(Call::kCarryOutStaging, oxide::Internal("mkfs.ext4 exited with status 1"));
  std::optional<Status> failed;
  engine_->Stage(Stage(), Into(failed));
  RunUntil([&] { return os_.holding(); });
  EXPECT_EQ(DurableStagingState(), "formatting");
  EXPECT_EQ(DurableStaging("format_uuid"), FakeNodeOs::kPlanUuid)
      << "the UUID mkfs writes is durable before mkfs runs";
  EXPECT_EQ(DurableStaging("device_name"), "nvme1n1");
  os_.Release();
  EXPECT_EQ(Wait(failed).code(), StatusCode::kInternal);
  EXPECT_EQ(DurableStaging("format_uuid"), FakeNodeOs::kPlanUuid) << "the intent stays";

  ASSERT_TRUE(StageNow(Stage()).ok());
  ASSERT_TRUE(os_.last_inputs().has_value());
  EXPECT_EQ(os_.last_inputs()->intent_uuid, FakeNodeOs::kPlanUuid);
  std::vector<FakeNodeOs::CarriedOut> carried = os_.carried_out();
  ASSERT_EQ(carried.size(), 2U);
  EXPECT_EQ(carried[1].what, "reformat");
  EXPECT_EQ(carried[1].uuid, FakeNodeOs::kPlanUuid) << "mkfs writes the intent's UUID again";
  EXPECT_EQ(DurableStagingState(), "staged");
  EXPECT_EQ(DurableStaging("format_uuid"), "");
}

TEST_F(NodeVolumeEngineTest, AnUnstageOfAVolumeWhoseFormatFailedClearsTheIntent) {
  os_.FailNext(Call::kCarryOutStaging, oxide::Internal("mkfs.ext4 exited with status 1"));
  EXPECT_EQ(StageNow(Stage()).code(), StatusCode::kInternal);
  EXPECT_EQ(DurableStagingState(), "formatting");
  std::optional<Status> unstaged;
  engine_->Unstage("vol-1", dir_.File("staging"), Into(unstaged));
  EXPECT_TRUE(Wait(unstaged).ok()) << unstaged->ToString();
  EXPECT_EQ(DurableStagingState(), "none") << "the intent goes with the unstage";

  // The volume may have been used elsewhere since: the next stage trusts only the device.
  ASSERT_TRUE(StageNow(Stage()).ok());
  ASSERT_TRUE(os_.last_inputs().has_value());
  EXPECT_EQ(os_.last_inputs()->intent_uuid, "");
  EXPECT_EQ(os_.format_calls(), (std::vector<std::string>{"format", "format"}));
}

TEST_F(NodeVolumeEngineTest, TheDisksSizeAsPublishedReachesThePlan) {
  StageSpec spec = Stage();
  spec.disk_bytes = uint64_t{10} << 30;
  ASSERT_TRUE(StageNow(spec).ok());
  ASSERT_TRUE(os_.last_inputs().has_value());
  EXPECT_EQ(os_.last_inputs()->expected_bytes, std::optional<uint64_t>(uint64_t{10} << 30));
  EXPECT_EQ(os_.last_inputs()->staging_path, dir_.File("staging"));
  EXPECT_EQ(os_.last_inputs()->fs_type, "ext4");
}

TEST_F(NodeVolumeEngineTest, ADeviceVanishingMidStageFailsTheStageAndLeavesNoRow) {
  // It holds a filesystem: no format intent.
  os_.SetPlan({.action = oxide::node::StageAction::kMount,
               .reason = "ext4",
               .uuid = "",
               .encrypt = false,
               .volume_device = std::nullopt});
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
  os_.SetPlan({.action = oxide::node::StageAction::kMount,
               .reason = "ext4",
               .uuid = "",
               .encrypt = false,
               .volume_device = std::nullopt});
  os_.HoldNext(Call::kCarryOutStaging);
  std::optional<Status> staged;
  engine_->Stage(Stage(), Into(staged));
  RunUntil([&] { return os_.holding() && store_->GetStaging("vol-1")->device_number == "259:1"; });
  HealthResult before;
  engine_->Health("vol-1", dir_.File("staging"), Into(before));
  RunUntil([&] { return before.has_value(); });
  ASSERT_TRUE(before->ok());
  EXPECT_EQ((*before)->problem, dir_.File("staging") + " is not mounted");
  os_.Release();
  ASSERT_TRUE(Wait(staged).ok());
  HealthResult after;
  engine_->Health("vol-1", dir_.File("staging"), Into(after));
  RunUntil([&] { return after.has_value(); });
  ASSERT_TRUE(after->ok());
  EXPECT_EQ((*after)->problem, "");
  ASSERT_TRUE((*after)->usage.has_value());
  EXPECT_EQ((*after)->usage->inodes_used, 11);
  HealthResult unknown;
  engine_->Health("vol-2", dir_.File("staging"), Into(unknown));
  RunUntil([&] { return unknown.has_value(); });
  EXPECT_EQ(unknown->status().code(), StatusCode::kNotFound);
}

TEST_F(NodeVolumeEngineTest, AnUnmountRefusedWithEbusyLeavesTheVolumeStaged) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.FailNext(Call::kUnmountVolumePath,
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
  os_.FailNext(Call::kPublishVolume, oxide::Internal("mkdir " + dir_.File("target") +
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
  EXPECT_EQ(os_.count(Call::kCarryOutStaging), 0);
}

TEST_F(NodeVolumeEngineTest, ARepeatedBlockStageAfterARenumberingFollowsTheSerial) {
  ASSERT_TRUE(StageNow(BlockStage()).ok());
  EXPECT_EQ(DurableStaging("device_name"), "nvme1n1");
  // A reboot: the volume's disk is nvme3n1 now, and its old name belongs to another disk.
  os_.MoveDevice(kSerial, "nvme3n1", 3);
  os_.AddDevice(kOtherSerial, "nvme1n1", 1);
  Status repeated = StageNow(BlockStage());
  EXPECT_TRUE(repeated.ok()) << repeated.ToString();
  EXPECT_EQ(os_.count(Call::kVerifyStaged), 1);
  EXPECT_EQ(DurableStagingState(), "staged");
  EXPECT_EQ(DurableStaging("device_name"), "nvme3n1") << "the row follows the serial";
  EXPECT_EQ(DurableStaging("device_number"), "259:3");

  std::optional<Status> published;
  engine_->Publish(BlockPublish(), Into(published));
  ASSERT_TRUE(Wait(published).ok()) << published->ToString();
  std::vector<FakeNodeOs::Bind> binds = os_.binds();
  ASSERT_EQ(binds.size(), 1U);
  EXPECT_EQ(binds[0].target, dir_.File("target"));
  EXPECT_EQ(binds[0].device, "nvme3n1") << "the pod gets its own disk, not the old name's";
  EXPECT_EQ(DurablePublicationState(), "published");
  EXPECT_EQ(DurableStaging("device_name"), "nvme3n1");
}

TEST_F(NodeVolumeEngineTest, ARepeatedStageWhoseStagingMountVanishedStagesAgain) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.UnmountBehindTheEngine(dir_.File("staging"));
  Status repeated = StageNow(Stage());
  EXPECT_TRUE(repeated.ok()) << repeated.ToString();
  EXPECT_EQ(os_.count(Call::kVerifyStaged), 1);
  EXPECT_EQ(os_.format_calls(), (std::vector<std::string>{"format", "mount"}))
      << "the filesystem is mounted again, never formatted";
  EXPECT_TRUE(os_.mounted(dir_.File("staging")));
  EXPECT_EQ(DurableStagingState(), "staged");
  EXPECT_EQ(DurableStaging("device_name"), "nvme1n1");
}

TEST_F(NodeVolumeEngineTest, APublishWhoseStagingMountVanishedFailsAndBindsNothing) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.UnmountBehindTheEngine(dir_.File("staging"));
  std::optional<Status> published;
  engine_->Publish(Publish(), Into(published));
  Status refused = Wait(published);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.ToString();
  EXPECT_NE(refused.message().find("nothing is mounted at the staging path"), std::string::npos)
      << refused.message();
  EXPECT_EQ(PublicationState(), "none");
  EXPECT_EQ(DurablePublicationState(), "none");
  EXPECT_TRUE(os_.binds().empty());
  EXPECT_FALSE(os_.mounted(dir_.File("target"))) << "the pod never writes into an empty directory";
}

TEST_F(NodeVolumeEngineTest, FormatsWaitForAFreeSlotOfMaxConcurrentFormats) {
  UseFormatLimit(1);
  os_.AddDevice(kOtherSerial, "nvme2n1", 2);
  os_.HoldNext(Call::kCarryOutStaging);
  os_.HoldNext(Call::kCarryOutStaging);
  std::optional<Status> first, second;
  engine_->Stage(StageOf("vol-1", kSerial, "staging"), Into(first));
  RunUntil([&] { return os_.held(Call::kCarryOutStaging) == 1; });
  engine_->Stage(StageOf("vol-2", kOtherSerial, "staging-2"), Into(second));
  RunUntil([&] {
    auto row = store_->GetStaging("vol-2");
    return row && row->state == "formatting";
  });
  // The intent is durable, so the engine has asked for a format slot; a worker round trip then
  // lets a CarryOutStaging the engine started (it would have been queued first) arrive.
  EXPECT_EQ(DurableStaging("format_uuid", "vol-2"), FakeNodeOs::kPlanUuid);
  bool round_trip = false;
  RunBlocking(
      loop_.uv(), [] { return Status::Ok(); }, [&](const Status&) { round_trip = true; });
  RunUntil([&] { return round_trip; });
  EXPECT_EQ(os_.count(Call::kCarryOutStaging), 1) << "the second format waits for the first";
  EXPECT_FALSE(second.has_value());

  os_.Release();
  EXPECT_TRUE(Wait(first).ok());
  // The second format, now (or already done, by an engine that did not wait).
  RunUntil([&] { return os_.held(Call::kCarryOutStaging) == 1 || second.has_value(); });
  EXPECT_EQ(os_.count(Call::kCarryOutStaging), 2);
  os_.Release();
  EXPECT_TRUE(Wait(second).ok()) << second->ToString();
  EXPECT_EQ(os_.max_in_flight(Call::kCarryOutStaging), 1);
  EXPECT_EQ(os_.format_calls(), (std::vector<std::string>{"format", "format"}));
  EXPECT_EQ(DurableStaging("state", "vol-1"), "staged");
  EXPECT_EQ(DurableStaging("state", "vol-2"), "staged");
}

TEST_F(NodeVolumeEngineTest, HealthCallsForOneVolumeShareOneMeasurementAndHoldNoOtherVolume) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.AddDevice(kOtherSerial, "nvme2n1", 2);
  ASSERT_TRUE(StageNow(StageOf("vol-2", kOtherSerial, "staging-2")).ok());
  os_.HoldNext(Call::kMeasureVolume);
  HealthResult first, second, other;
  engine_->Health("vol-1", dir_.File("staging"), Into(first));
  RunUntil([&] { return os_.holding(); });
  engine_->Health("vol-1", dir_.File("staging"), Into(second));
  engine_->Health("vol-2", dir_.File("staging-2"), Into(other));
  RunUntil([&] { return other.has_value(); });
  EXPECT_FALSE(first.has_value()) << "still held";
  EXPECT_FALSE(second.has_value()) << "it waits for the measurement under way";
  ASSERT_TRUE(other->ok());
  EXPECT_EQ((*other)->problem, "");

  os_.Release();
  RunUntil([&] { return first.has_value() && second.has_value(); });
  EXPECT_EQ(os_.measurements_of(dir_.File("staging")), 1) << "one measurement for both calls";
  EXPECT_EQ(os_.count(Call::kMeasureVolume), 2);
  ASSERT_TRUE(first->ok());
  ASSERT_TRUE(second->ok());
  ASSERT_TRUE((*first)->usage.has_value());
  ASSERT_TRUE((*second)->usage.has_value());
  EXPECT_EQ((*first)->usage->bytes_used, 1 << 20) << "the first measurement's answer";
  EXPECT_EQ((*second)->usage->bytes_used, 1 << 20) << "the same answer";
  ASSERT_TRUE((*other)->usage.has_value());
  EXPECT_EQ((*other)->usage->bytes_used, 2 << 20);
}

TEST_F(NodeVolumeEngineTest, ARepeatedStageOfAPublishedVolumeWhoseDiskWentKeepsItsTeardown) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  std::optional<Status> published;
  engine_->Publish(Publish(), Into(published));
  ASSERT_TRUE(Wait(published).ok());
  os_.RemoveDevice(kSerial);  // detached: the mounts stay, on a device that is gone
  Status again = StageNow(Stage());
  EXPECT_EQ(again.code(), StatusCode::kNotFound) << again.ToString();
  EXPECT_EQ(DurableStagingState(), "stale") << "the row stays, with the device it last had";
  EXPECT_EQ(store_->GetStaging("vol-1")->device_name, "nvme1n1");
  std::optional<Status> unpublished, unstaged;
  engine_->Unpublish("vol-1", dir_.File("target"), Into(unpublished));
  EXPECT_TRUE(Wait(unpublished).ok()) << unpublished->ToString();
  engine_->Unstage("vol-1", dir_.File("staging"), Into(unstaged));
  EXPECT_TRUE(Wait(unstaged).ok()) << unstaged->ToString();
  EXPECT_FALSE(os_.mounted(dir_.File("target")));
  EXPECT_FALSE(os_.mounted(dir_.File("staging")));
  EXPECT_EQ(DurableStagingState(), "none");
}

TEST_F(NodeVolumeEngineTest, AStuckMeasurementHoldsAtMostEightCallersAndTellsTheRest) {
  ASSERT_TRUE(StageNow(Stage()).ok());
  os_.HoldNext(Call::kMeasureVolume);
  std::vector<HealthResult> waiting(8);
  for (HealthResult& result : waiting)
    engine_->Health("vol-1", dir_.File("staging"), Into(result));
  RunUntil([&] { return os_.holding(); });
  HealthResult told;
  engine_->Health("vol-1", dir_.File("staging"), Into(told));
  RunUntil([&] { return told.has_value(); });
  ASSERT_TRUE(told->ok());
  EXPECT_NE((*told)->problem.find("may be hung"), std::string::npos) << (*told)->problem;
  for (const HealthResult& result : waiting)
    EXPECT_FALSE(result.has_value());
  os_.Release();
  RunUntil([&] {
    return std::all_of(waiting.begin(), waiting.end(), [](auto& r) { return r.has_value(); });
  });
  EXPECT_EQ(os_.count(Call::kMeasureVolume), 1);
}

TEST_F(NodeVolumeEngineTest, AFormatIntentClaimsItsDiskAgainstAnotherVolume) {
  os_.FailNext(Call::kCarryOutStaging, oxide::Internal("mkfs.ext4 exited with status 1"));
  ASSERT_FALSE(StageNow(Stage()).ok());
  ASSERT_EQ(DurableStagingState(), "formatting");
  Status other = StageNow(StageOf("vol-2", kSerial, "staging-2"));
  EXPECT_EQ(other.code(), StatusCode::kFailedPrecondition) << other.ToString();
  EXPECT_NE(other.message().find("already staged for volume vol-1"), std::string::npos)
      << other.message();
  EXPECT_EQ(os_.count(Call::kCarryOutStaging), 1) << "nothing touched the disk for vol-2";
}

}  // namespace
}  // namespace engine_test
