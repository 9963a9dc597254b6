// The controller's per-volume state machine: every (state, event) pair against the legal table.
#include "engine/volume_state.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace oxide::engine {
namespace {

using S = VolumeState;
using E = VolumeEvent;

constexpr S kStates[] = {S::kCreating,  S::kCreated,      S::kPublishing,
                         S::kNodeReady, S::kUnpublishing, S::kDeleting};
constexpr E kEvents[] = {E::kCreateConfirmed,    E::kPublishRequested,   E::kPublishConfirmed,
                         E::kUnpublishRequested, E::kUnpublishConfirmed, E::kDeleteRequested};

TEST(VolumeState, EveryTransitionIsLegalExactlyWhenTheTableSaysSo) {
  const std::map<std::pair<S, E>, S> legal = {
      {{S::kCreating, E::kCreateConfirmed}, S::kCreated},
      {{S::kCreated, E::kCreateConfirmed}, S::kCreated},
      {{S::kCreated, E::kPublishRequested}, S::kPublishing},
      {{S::kNodeReady, E::kPublishRequested}, S::kPublishing},
      {{S::kPublishing, E::kPublishConfirmed}, S::kNodeReady},
      {{S::kCreated, E::kUnpublishRequested}, S::kUnpublishing},
      {{S::kNodeReady, E::kUnpublishRequested}, S::kUnpublishing},
      {{S::kUnpublishing, E::kUnpublishConfirmed}, S::kCreated},
      {{S::kCreated, E::kDeleteRequested}, S::kDeleting},
      {{S::kNodeReady, E::kDeleteRequested}, S::kDeleting},
  };
  int checked = 0;
  for (S from : kStates) {
    for (E event : kEvents) {
      StatusOr<S> next = NextState(from, event);
      auto expected = legal.find({from, event});
      SCOPED_TRACE(std::string(VolumeStateName(from)) + " + " + VolumeEventName(event));
      if (expected == legal.end()) {
        ASSERT_FALSE(next.ok());
        EXPECT_EQ(next.status().code(), StatusCode::kFailedPrecondition);
        EXPECT_NE(next.status().message().find(VolumeStateName(from)), std::string::npos);
        EXPECT_NE(next.status().message().find(VolumeEventName(event)), std::string::npos);
      } else {
        ASSERT_TRUE(next.ok());
        EXPECT_EQ(*next, expected->second);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 36);
}

TEST(VolumeState, TransitionalStatesCannotStartAnotherOperation) {
  for (S busy : {S::kCreating, S::kPublishing, S::kUnpublishing, S::kDeleting}) {
    EXPECT_FALSE(IsStable(busy));
    for (E request : {E::kPublishRequested, E::kUnpublishRequested, E::kDeleteRequested}) {
      EXPECT_FALSE(NextState(busy, request).ok()) << VolumeStateName(busy);
    }
  }
  EXPECT_TRUE(IsStable(S::kCreated));
  EXPECT_TRUE(IsStable(S::kNodeReady));
}

TEST(VolumeState, NamesRoundTrip) {
  for (S state : kStates)
    EXPECT_EQ(VolumeStateFromName(VolumeStateName(state)), state);
  EXPECT_EQ(VolumeStateName(S::kCreated), std::string("CREATED"));
  EXPECT_EQ(VolumeStateName(S::kNodeReady), std::string("NODE_READY"));
  EXPECT_FALSE(VolumeStateFromName("VOL_READY").has_value());
}

}  // namespace
}  // namespace oxide::engine
