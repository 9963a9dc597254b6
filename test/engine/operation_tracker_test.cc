// The per-volume operation tracker: start, join with identical arguments, ABORTED otherwise,
// aliases, and every waiter getting the one result.
#include "engine/operation_tracker.h"

#include <gtest/gtest.h>

namespace oxide::engine {
namespace {

using A = OperationTracker::Admission;

TEST(OperationTracker, IdenticalCallsJoinAndAllGetTheResult) {
  OperationTracker tracker;
  std::vector<std::string> seen;
  auto waiter = [&](const OperationResult& r) { seen.push_back(r.ok() ? r->id : "error"); };
  EXPECT_EQ(tracker.Admit("vol", "CreateVolume", "fp", waiter), A::kStart);
  EXPECT_EQ(tracker.Admit("vol", "CreateVolume", "fp", waiter), A::kJoined);
  EXPECT_EQ(tracker.Admit("vol", "CreateVolume", "fp", waiter), A::kJoined);
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(tracker.in_flight(), 1u);
  backend::Disk disk;
  disk.id = "disk-1";
  tracker.Finish("vol", disk);
  EXPECT_EQ(seen, (std::vector<std::string>{"disk-1", "disk-1", "disk-1"}));
  EXPECT_EQ(tracker.in_flight(), 0u);
  EXPECT_FALSE(tracker.Busy("vol"));
  EXPECT_EQ(tracker.Admit("vol", "DeleteVolume", "", waiter), A::kStart);
}

TEST(OperationTracker, AnotherCallIsAbortedAtOnceNamingThePendingOperation) {
  OperationTracker tracker;
  EXPECT_EQ(tracker.Admit("vol-1", "ControllerPublishVolume", "a", [](auto&) {}), A::kStart);
  std::optional<Status> refused;
  auto record = [&](const OperationResult& r) { refused = r.status(); };
  EXPECT_EQ(tracker.Admit("vol-1", "DeleteVolume", "", record), A::kRejected);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code(), StatusCode::kAborted);
  EXPECT_EQ(refused->message(),
            "operation ControllerPublishVolume pending for volume vol-1; retry when it has "
            "finished");
  refused.reset();
  EXPECT_EQ(tracker.Admit("vol-1", "ControllerPublishVolume", "b", record), A::kRejected);
  EXPECT_NE(refused->message().find("with other arguments"), std::string::npos);
  EXPECT_EQ(tracker.Admit("vol-2", "DeleteVolume", "", record), A::kStart);
  EXPECT_EQ(tracker.rejected(), 2u);
}

TEST(OperationTracker, AnAliasReachesTheSameOperationAndEndsWithIt) {
  OperationTracker tracker;
  int finished = 0;
  EXPECT_EQ(tracker.Admit("disk-name", "CreateVolume", "fp", [&](auto&) { ++finished; }),
            A::kStart);
  tracker.Alias("disk-name", "volume-id");
  std::optional<Status> refused;
  EXPECT_EQ(tracker.Admit("volume-id", "DeleteVolume", "", [&](auto& r) { refused = r.status(); }),
            A::kRejected);
  EXPECT_EQ(refused->code(), StatusCode::kAborted);
  tracker.Finish("disk-name", Status(StatusCode::kUnavailable, "x"));
  EXPECT_EQ(finished, 1);
  EXPECT_FALSE(tracker.Busy("volume-id"));
  EXPECT_EQ(tracker.in_flight(), 0u);
}

// A shutdown waits for the tracker to drain: told once no operation is left, also when a waiter
// starts the next one first (then only when that one ends), and at once when none is running.
TEST(OperationTracker, WhenIdleRunsOnceNoOperationIsLeftAndDescribesWhatRuns) {
  OperationTracker tracker;
  int idle = 0;
  tracker.WhenIdle([&] { ++idle; });
  EXPECT_EQ(idle, 1) << "nothing in flight: at once";
  auto ignore = [](const OperationResult&) {};
  ASSERT_EQ(tracker.Admit("disk-a", "CreateVolume", "fp", ignore), A::kStart);
  tracker.Alias("disk-a", "vol-a");
  ASSERT_EQ(tracker.Admit("vol-b", "DeleteVolume", "", ignore), A::kStart);
  EXPECT_EQ(tracker.Describe(),
            (std::vector<std::string>{"CreateVolume disk-a vol-a", "DeleteVolume vol-b"}));
  tracker.WhenIdle([&] { ++idle; });
  tracker.Finish("vol-a", backend::Disk{});
  EXPECT_EQ(idle, 1) << "one is still running";
  // Its waiter starts another operation before the tracker would be idle.
  ASSERT_EQ(tracker.Admit("vol-c", "DeleteVolume", "",
                          [&](const OperationResult&) {
                            tracker.Admit("vol-d", "DeleteVolume", "", ignore);
                          }),
            A::kStart);
  tracker.Finish("vol-b", backend::Disk{});
  tracker.Finish("vol-c", backend::Disk{});
  EXPECT_EQ(idle, 1) << "vol-d started from a waiter";
  tracker.Finish("vol-d", backend::Disk{});
  EXPECT_EQ(idle, 2);
  tracker.Admit("vol-e", "DeleteVolume", "", ignore);
  tracker.Finish("vol-e", backend::Disk{});
  EXPECT_EQ(idle, 2) << "a listener runs once";
}

}  // namespace
}  // namespace oxide::engine
