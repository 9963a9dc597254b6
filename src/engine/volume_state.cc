#include "engine/volume_state.h"

#include <array>
#include <string>

namespace oxide::engine {
namespace {

struct Transition {
  VolumeState from;
  VolumeEvent event;
  VolumeState to;
};

using S = VolumeState;
using E = VolumeEvent;

// Every legal transition; anything else is rejected. A publish or delete may start from
// NODE_READY because Oxide, not this record, decides whether the disk may move (a re-publish to
// the same instance is idempotent; a delete of an attached disk is refused by Oxide with the rule).
constexpr std::array kTransitions = {
    Transition{S::kCreating, E::kCreateConfirmed, S::kCreated},
    Transition{S::kCreated, E::kCreateConfirmed, S::kCreated},
    Transition{S::kCreated, E::kPublishRequested, S::kPublishing},
    Transition{S::kNodeReady, E::kPublishRequested, S::kPublishing},
    Transition{S::kPublishing, E::kPublishConfirmed, S::kNodeReady},
    Transition{S::kCreated, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kNodeReady, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kUnpublishing, E::kUnpublishConfirmed, S::kCreated},
    Transition{S::kCreated, E::kDeleteRequested, S::kDeleting},
    Transition{S::kNodeReady, E::kDeleteRequested, S::kDeleting},
};

constexpr std::array kStateNames = {"CREATING",   "CREATED",      "PUBLISHING",
                                    "NODE_READY", "UNPUBLISHING", "DELETING"};

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
    case E::kCreateConfirmed:
      return "create confirmed";
    case E::kPublishRequested:
      return "publish requested";
    case E::kPublishConfirmed:
      return "publish confirmed";
    case E::kUnpublishRequested:
      return "unpublish requested";
    case E::kUnpublishConfirmed:
      return "unpublish confirmed";
    case E::kDeleteRequested:
      return "delete requested";
  }
  return "unknown event";
}

StatusOr<VolumeState> NextState(VolumeState from, VolumeEvent event) {
  for (const Transition& t : kTransitions) {
    if (t.from == from && t.event == event) return t.to;
  }
  return FailedPrecondition(std::string("illegal volume state transition: ") +
                            VolumeEventName(event) + " in state " + VolumeStateName(from));
}

bool IsStable(VolumeState state) {
  return state == S::kCreated || state == S::kNodeReady;
}

}  // namespace oxide::engine
