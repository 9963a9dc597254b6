#include "engine/volume_state.h"

#include <array>
#include <string>

namespace oxide::engine {
namespace {

using S = VolumeState;
using E = VolumeEvent;

constexpr VolumeRowState kNoRow = std::nullopt;

struct Transition {
  VolumeRowState from;
  VolumeEvent event;
  VolumeRowState to;
};

// Every legal transition; anything else is rejected. A publish or delete may start from
// NODE_READY because Oxide, not this record, decides whether the disk may move (a re-publish to
// the same instance is idempotent; a delete of an attached disk is refused by Oxide with the
// rule). A delete also takes over a row a failed commit left transitional: Oxide decides.
constexpr std::array kRequests = {
    Transition{kNoRow, E::kCreateRequested, S::kCreating},
    Transition{S::kCreated, E::kPublishRequested, S::kPublishing},
    Transition{S::kNodeReady, E::kPublishRequested, S::kPublishing},
    Transition{S::kCreated, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kNodeReady, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kCreated, E::kDeleteRequested, S::kDeleting},
    Transition{S::kNodeReady, E::kDeleteRequested, S::kDeleting},
    Transition{S::kCreating, E::kDeleteRequested, S::kDeleting},
    Transition{S::kPublishing, E::kDeleteRequested, S::kDeleting},
    Transition{S::kUnpublishing, E::kDeleteRequested, S::kDeleting},
    Transition{S::kDeleting, E::kDeleteRequested, S::kDeleting},
};

// Oxide's answer holds whatever the row says: from every state (and from no row) a report moves
// the row to what Oxide reports.
VolumeRowState Reported(VolumeEvent event) {
  if (event == E::kOxideReportsDetached) return S::kCreated;
  if (event == E::kOxideReportsAttached) return S::kNodeReady;
  return kNoRow;
}

bool IsReport(VolumeEvent event) {
  return event == E::kOxideReportsDetached || event == E::kOxideReportsAttached ||
         event == E::kOxideReportsNoDisk;
}

constexpr std::array kStateNames = {"CREATING",   "CREATED",      "PUBLISHING",
                                    "NODE_READY", "UNPUBLISHING", "DELETING"};

std::string RowStateName(VolumeRowState state) {
  return state ? VolumeStateName(*state) : "no row";
}

}  // namespace

const char* VolumeStateName(VolumeState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::optional<VolumeState> VolumeStateFromName(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (name == kStateNames[i]) return static_cast<VolumeState>(i);
  }
  return std::nullopt;
}

const char* VolumeEventName(VolumeEvent event) {
  switch (event) {
    case E::kCreateRequested:
      return "create requested";
    case E::kPublishRequested:
      return "publish requested";
    case E::kUnpublishRequested:
      return "unpublish requested";
    case E::kDeleteRequested:
      return "delete requested";
    case E::kOxideReportsDetached:
      return "Oxide reports the disk detached";
    case E::kOxideReportsAttached:
      return "Oxide reports the disk attached";
    case E::kOxideReportsNoDisk:
      return "Oxide reports no disk";
  }
  return "unknown event";
}

StatusOr<VolumeRowState> NextState(VolumeRowState from, VolumeEvent event) {
  if (IsReport(event)) return Reported(event);
  for (const Transition& t : kRequests) {
    if (t.from == from && t.event == event) return t.to;
  }
  return FailedPrecondition(std::string("illegal volume state transition: ") +
                            VolumeEventName(event) + " in state " + RowStateName(from));
}

bool IsStable(VolumeState state) {
  return state == S::kCreated || state == S::kNodeReady;
}

}  // namespace oxide::engine
