// The shutdown's wait for operations in flight (app/shutdown.h) on a ManualClock: it ends
// when the last tracker drains (notified, not polled), or at the deadline with what is left.
#include <gtest/gtest.h>

#include "app/shutdown.h"
#include "support/manual_clock.h"

namespace oxide {
namespace {

using engine::OperationResult;
using engine::OperationTracker;
using namespace std::chrono_literals;

void Start(OperationTracker& tracker, const std::string& key, const std::string& kind) {
  tracker.Admit(key, kind, "", [](const OperationResult&) {});
}

TEST(OperationDrain, EndsWhenTheLastTrackerDrains) {
  testing::ManualClock clock;
  OperationTracker volumes, snapshots;
  Start(volumes, "vol-1", "CreateVolume");
  Start(snapshots, "snap-1", "CreateSnapshot");
  OperationDrain drain(&clock, {{"volume", &volumes}, {"snapshot", &snapshots}});
  std::optional<std::vector<std::string>> left;
  drain.Start(clock.Now() + 10s, [&](std::vector<std::string> l) { left = std::move(l); });
  EXPECT_EQ(drain.in_flight(), 2u);
  volumes.Finish("vol-1", backend::Disk{});
  EXPECT_FALSE(left);
  Start(volumes, "vol-2", "DeleteVolume");  // another one began meanwhile
  snapshots.Finish("snap-1", backend::Disk{});
  EXPECT_FALSE(left);
  volumes.Finish("vol-2", backend::Disk{});
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->empty());
  EXPECT_EQ(clock.pending_timers(), 0u) << "the deadline's timer is cancelled";
}

TEST(OperationDrain, AtTheDeadlineReportsWhatIsLeft) {
  testing::ManualClock clock;
  OperationTracker volumes, snapshots;
  Start(volumes, "vol-1", "ControllerPublishVolume");
  OperationDrain drain(&clock, {{"volume", &volumes}, {"snapshot", &snapshots}});
  std::optional<std::vector<std::string>> left;
  drain.Start(clock.Now() + 10s, [&](std::vector<std::string> l) { left = std::move(l); });
  clock.Advance(9999ms);
  EXPECT_FALSE(left);
  clock.Advance(1ms);
  ASSERT_TRUE(left);
  EXPECT_EQ(*left, (std::vector<std::string>{"volume: ControllerPublishVolume vol-1"}));
  volumes.Finish("vol-1", backend::Disk{});  // later: nothing more happens
}

TEST(OperationDrain, NothingInFlightEndsAtOnce) {
  testing::ManualClock clock;
  OperationTracker volumes;
  OperationDrain drain(&clock, {{"volume", &volumes}});
  bool done = false;
  drain.Start(clock.Now() + 10s,
              [&](const std::vector<std::string>& left) { done = left.empty(); });
  EXPECT_TRUE(done);
}

}  // namespace
}  // namespace oxide
