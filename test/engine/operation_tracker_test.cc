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

}  // namespace
}  // namespace oxide::engine
