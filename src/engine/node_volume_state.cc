#include "engine/node_volume_state.h"

#include <array>
#include <string>

#include "store/node_volume_store.h"

namespace oxide::engine {
namespace {

using S = NodeVolumeState;
using E = NodeVolumeEvent;

struct Transition {
  NodeRowState from;
  NodeVolumeEvent event;
  NodeRowState to;
};

constexpr NodeRowState kNoRow = std::nullopt;

// Every legal transition; anything else is rejected. A transitional row found by a new request is
// one a failed commit or a crash left behind: the request starts its work over.
constexpr std::array kTransitions = {
    // Staging rows.
    Transition{kNoRow, E::kStageRequested, S::kStaging},
    Transition{S::kStaging, E::kStageRequested, S::kStaging},
    Transition{S::kUnstaging, E::kStageRequested, S::kStaging},
    Transition{S::kStale, E::kStageRequested, S::kStaging},
    Transition{S::kFormatting, E::kStageRequested, S::kStaging},  // another device or fs type
    Transition{S::kFormatting, E::kFormatResumed, S::kFormatting},
    Transition{S::kStaging, E::kFormatIntended, S::kFormatting},
    Transition{S::kStaging, E::kStaged, S::kStaged},
    Transition{S::kFormatting, E::kStaged, S::kStaged},
    Transition{S::kStaging, E::kStageFailed, kNoRow},
    Transition{S::kFormatting, E::kStageFailed, S::kFormatting},  // the intent stays for the retry
    Transition{S::kStaged, E::kUnstageRequested, S::kUnstaging},
    Transition{S::kStale, E::kUnstageRequested, S::kUnstaging},
    Transition{S::kStaging, E::kUnstageRequested, S::kUnstaging},
    Transition{S::kUnstaging, E::kUnstageRequested, S::kUnstaging},
    Transition{S::kUnstaging, E::kUnstageFailed, S::kStaged},
    Transition{S::kUnstaging, E::kUnstaged, kNoRow},
    Transition{S::kStaged, E::kMountVanished, S::kStale},
    Transition{S::kFormatting, E::kFormatAbandoned, kNoRow},
    Transition{S::kStaging, E::kRestageFailed, S::kStale},
    // Publication rows.
    Transition{kNoRow, E::kPublishRequested, S::kPublishing},
    Transition{S::kPublishing, E::kPublishRequested, S::kPublishing},
    Transition{S::kUnpublishing, E::kPublishRequested, S::kPublishing},
    Transition{S::kStale, E::kPublishRequested, S::kPublishing},
    Transition{S::kPublishing, E::kPublished, S::kPublished},
    Transition{S::kPublishing, E::kPublishFailed, kNoRow},
    Transition{S::kPublished, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kPublishing, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kUnpublishing, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kStale, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kUnpublishing, E::kUnpublishFailed, S::kPublished},
    Transition{S::kUnpublishing, E::kUnpublished, kNoRow},
    Transition{S::kStale, E::kUnstaged, kNoRow},  // a stale publication goes with its staging
    Transition{S::kPublished, E::kMountVanished, S::kStale},
};

// Indexed by NodeVolumeState; the store's persisted names.
constexpr std::array kStateNames = {store::kStaging,      store::kFormatting, store::kStaged,
                                    store::kUnstaging,    store::kPublishing, store::kPublished,
                                    store::kUnpublishing, store::kStale};

constexpr std::array kEventNames = {"stage requested",  "format resumed", "format intended",
                                    "staged",           "stage failed",   "unstage requested",
                                    "unstage failed",   "unstaged",       "publish requested",
                                    "published",        "publish failed", "unpublish requested",
                                    "unpublish failed", "unpublished",    "mount vanished",
                                    "format abandoned", "restage failed"};

}  // namespace

const char* NodeVolumeStateName(NodeVolumeState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::optional<NodeVolumeState> NodeVolumeStateFromName(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (name == kStateNames[i]) return static_cast<NodeVolumeState>(i);
  }
  return std::nullopt;
}

const char* NodeVolumeEventName(NodeVolumeEvent event) {
  return kEventNames[static_cast<size_t>(event)];
}

StatusOr<NodeRowState> NextNodeState(NodeRowState from, NodeVolumeEvent event) {
  for (const Transition& t : kTransitions) {
    if (t.from == from && t.event == event) return t.to;
  }
  return FailedPrecondition(std::string("illegal node volume state transition: ") +
                            NodeVolumeEventName(event) + " with " +
                            (from ? NodeVolumeStateName(*from) : "no row"));
}

bool IsSettled(NodeVolumeState state) {
  return state == S::kStaged || state == S::kPublished;
}

}  // namespace oxide::engine
