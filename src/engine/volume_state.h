// The controller's half of the per-volume state machine (CSI spec figure 6): CREATED and
// NODE_READY with the transitional states persisted before Oxide is asked, the events that move
// a row, and the one table of legal transitions that every change of a controller row goes
// through. "No row" is a state too (std::nullopt). Requests may start only from a stable state;
// Oxide's answer about the disk holds in every state, because Oxide, not this record, is the
// truth. A failed operation is not an event: its row returns to what it was before the
// operation. The node service persists VOL_READY and PUBLISHED. Pure: any thread.
#pragma once

#include <optional>
#include <string_view>

#include "util/status.h"

namespace oxide::engine {

enum class VolumeState {
  kCreating,      // intent journaled, Oxide asked to create the disk
  kCreated,       // CREATED: the disk is detached and usable
  kPublishing,    // attach requested
  kNodeReady,     // NODE_READY: attached to the node (instance) recorded with it
  kUnpublishing,  // detach requested
  kDeleting,      // delete requested
};

enum class VolumeEvent {
  kCreateRequested,       // CreateVolume of a volume this plugin has no row for
  kPublishRequested,      // ControllerPublishVolume accepted
  kUnpublishRequested,    // ControllerUnpublishVolume accepted
  kDeleteRequested,       // DeleteVolume accepted
  kOxideReportsDetached,  // Oxide answered: the disk exists and no instance holds it
  kOxideReportsAttached,  // Oxide answered: an instance holds the disk (attaching or attached)
  kOxideReportsNoDisk,    // Oxide answered: there is no such disk (or it was just deleted)
};

using VolumeRowState = std::optional<VolumeState>;  // nullopt: no row

const char* VolumeStateName(VolumeState state);
std::optional<VolumeState> VolumeStateFromName(std::string_view name);
const char* VolumeEventName(VolumeEvent event);

// The state after `event` (nullopt: the row is deleted), or FAILED_PRECONDITION naming the
// illegal transition.
StatusOr<VolumeRowState> NextState(VolumeRowState from, VolumeEvent event);

// CREATED and NODE_READY; every other state means an operation is under way.
bool IsStable(VolumeState state);

}  // namespace oxide::engine
