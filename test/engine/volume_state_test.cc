// The controller's per-volume state machine: every (state, event) pair, "no row" included,
// against the legal table.
#include "engine/volume_state.h"

#include <gtest/gtest.h>

#include <map>
#include <utility>

namespace oxide::engine {
namespace {

using S = VolumeState;
using E = VolumeEvent;
using Row = VolumeRowState;

const Row kStates[] = {std::nullopt,  S::kCreating,     S::kCreated, S::kPublishing,
                       S::kNodeReady, S::kUnpublishing, S::kDeleting};
constexpr E kRequests[] = {E::kCreateRequested, E::kPublishRequested, E::kUnpublishRequested,
                           E::kDeleteRequested};
constexpr E kReports[] = {E::kOxideReportsDetached, E::kOxideReportsAttached,
                          E::kOxideReportsNoDisk};

std::string Name(Row row) {
  return row ? VolumeStateName(*row) : "no row";
}

TEST(VolumeState, EveryRequestIsLegalExactlyWhenTheTableSaysSo) {
  const std::map<std::pair<Row, E>, Row> legal = {
      {{std::nullopt, E::kCreateRequested}, S::kCreating},
      {{S::kCreated, E::kPublishRequested}, S::kPublishing},
      {{S::kNodeReady, E::kPublishRequested}, S::kPublishing},
      {{S::kCreated, E::kUnpublishRequested}, S::kUnpublishing},
      {{S::kNodeReady, E::kUnpublishRequested}, S::kUnpublishing},
      {{S::kCreated, E::kDeleteRequested}, S::kDeleting},
      {{S::kNodeReady, E::kDeleteRequested}, S::kDeleting},
      // A row a failed commit left transitional gives way to a delete: Oxide decides.
      {{S::kCreating, E::kDeleteRequested}, S::kDeleting},
      {{S::kPublishing, E::kDeleteRequested}, S::kDeleting},
      {{S::kUnpublishing, E::kDeleteRequested}, S::kDeleting},
      {{S::kDeleting, E::kDeleteRequested}, S::kDeleting},
  };
  int checked = 0;
  for (Row from : kStates) {
    for (E event : kRequests) {
      StatusOr<Row> next = NextState(from, event);
      auto expected = legal.find({from, event});
      SCOPED_TRACE(Name(from) + " + " + VolumeEventName(event));
      if (expected == legal.end()) {
        ASSERT_FALSE(next.ok());
        EXPECT_EQ(next.status().code(), StatusCode::kFailedPrecondition);
        EXPECT_NE(next.status().message().find(Name(from)), std::string::npos);
        EXPECT_NE(next.status().message().find(VolumeEventName(event)), std::string::npos);
      } else {
        ASSERT_TRUE(next.ok());
        EXPECT_EQ(*next, expected->second);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 28);
}

TEST(VolumeState, OxidesReportHoldsInEveryState) {
  for (Row from : kStates) {
    SCOPED_TRACE(Name(from));
    EXPECT_EQ(NextState(from, E::kOxideReportsDetached).value(), Row(S::kCreated));
    EXPECT_EQ(NextState(from, E::kOxideReportsAttached).value(), Row(S::kNodeReady));
    EXPECT_EQ(NextState(from, E::kOxideReportsNoDisk).value(), Row(std::nullopt));
  }
  for (E report : kReports)
    EXPECT_NE(std::string(VolumeEventName(report)).find("Oxide reports"), std::string::npos);
}

TEST(VolumeState, TransitionalStatesCannotStartAnotherOperation) {
  for (S busy : {S::kCreating, S::kPublishing, S::kUnpublishing, S::kDeleting}) {
    EXPECT_FALSE(IsStable(busy));
    for (E request : {E::kCreateRequested, E::kPublishRequested, E::kUnpublishRequested}) {
      EXPECT_FALSE(NextState(busy, request).ok()) << VolumeStateName(busy);
    }
  }
  EXPECT_TRUE(IsStable(S::kCreated));
  EXPECT_TRUE(IsStable(S::kNodeReady));
}

TEST(VolumeState, NamesRoundTrip) {
  for (Row state : kStates) {
    if (state) {
      EXPECT_EQ(VolumeStateFromName(VolumeStateName(*state)), state);
    }
  }
  EXPECT_EQ(VolumeStateName(S::kCreated), std::string("CREATED"));
  EXPECT_EQ(VolumeStateName(S::kNodeReady), std::string("NODE_READY"));
  EXPECT_FALSE(VolumeStateFromName("VOL_READY").has_value());
}

}  // namespace
}  // namespace oxide::engine
