// The controller's half of the per-volume state machine (CSI spec figure 6): CREATED and
// NODE_READY with the transitional states persisted before Oxide is asked, and the table of legal
// transitions. The node service persists VOL_READY and PUBLISHED. Pure: any thread.
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
  kCreateConfirmed,     // Oxide reports the disk detached (or the create found it already made)
  kPublishRequested,    // ControllerPublishVolume accepted
  kPublishConfirmed,    // Oxide reports the disk attached to the node
  kUnpublishRequested,  // ControllerUnpublishVolume accepted
  kUnpublishConfirmed,  // Oxide reports the disk not attached to the node
  kDeleteRequested,     // DeleteVolume accepted
};

const char* VolumeStateName(VolumeState state);
std::optional<VolumeState> VolumeStateFromName(std::string_view name);
const char* VolumeEventName(VolumeEvent event);

// The state after `event`, or FAILED_PRECONDITION naming the illegal transition. A failed
// operation is not an event: it returns the volume to the stable state it started from.
StatusOr<VolumeState> NextState(VolumeState from, VolumeEvent event);

// CREATED and NODE_READY; every other state means an operation is under way.
bool IsStable(VolumeState state);

}  // namespace oxide::engine
