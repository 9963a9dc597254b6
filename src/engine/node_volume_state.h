// The node's half of the per-volume state machine (CSI spec figure 6: VOL_READY is a staged
// volume, PUBLISHED a published one): the states of a staging row and of a publication row, the
// events that move them, and the one table of legal transitions that every change of a node row
// goes through. "No row" is a state too (std::nullopt): a row is created by a request event and
// deleted by a completion or failure event. The names are what the store persists. Below them,
// what the node volume engine's steps read of their own rows: their state, and whether a row
// names a given device. Pure: any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "node/device_finder.h"
#include "store/node_volume_store.h"
#include "util/status.h"

namespace oxide::engine {

enum class NodeVolumeState {
  kStaging,       // staging row: the device is being found and mounted
  kFormatting,    // staging row: the device was verified blank and our mkfs may have begun
  kStaged,        // staging row: VOL_READY
  kUnstaging,     // staging row: being unmounted
  kPublishing,    // publication row: being bind-mounted
  kPublished,     // publication row: PUBLISHED
  kUnpublishing,  // publication row: being unmounted
  kStale,         // either: the mount vanished (a reboot); the CO's retry redoes the work
};

enum class NodeVolumeEvent {
  kStageRequested,      // NodeStageVolume accepted (a new row, or a stale or leftover one)
  kFormatResumed,       // NodeStageVolume of a volume whose interrupted format of ours stays
  kFormatIntended,      // the device is blank: our mkfs is about to write to it
  kStaged,              // the device is mounted at the staging path (or found, for block)
  kStageFailed,         // nothing mounted: the row goes (a format intent stays)
  kUnstageRequested,    // NodeUnstageVolume accepted
  kUnstageFailed,       // the unmount failed: the volume is still staged
  kUnstaged,            // unmounted: the row goes, and the volume's stale publications with it
  kPublishRequested,    // NodePublishVolume accepted
  kPublished,           // bind-mounted at the target
  kPublishFailed,       // nothing mounted: the row goes
  kUnpublishRequested,  // NodeUnpublishVolume accepted
  kUnpublishFailed,     // the unmount failed: the volume is still published
  kUnpublished,         // unmounted: the row goes
  kMountVanished,       // the device or the mount behind a staged or published row is gone (or is
                        // another disk's): found at start-up, or by a repeated NodeStageVolume
  kFormatAbandoned,  // NodeUnstageVolume of a volume whose format never finished: the intent goes
  kRestageFailed,    // a stage of a stale row failed: the row stays stale, with the device it last
                     // had, so that unpublish and unstage can still unmount what is there
};

using NodeRowState = std::optional<NodeVolumeState>;  // nullopt: no row

const char* NodeVolumeStateName(NodeVolumeState state);
std::optional<NodeVolumeState> NodeVolumeStateFromName(std::string_view name);
const char* NodeVolumeEventName(NodeVolumeEvent event);

// The state after `event` (nullopt: the row is deleted), or FAILED_PRECONDITION naming the
// illegal transition.
StatusOr<NodeRowState> NextNodeState(NodeRowState from, NodeVolumeEvent event);

// Staged or published: no operation is under way on the row.
bool IsSettled(NodeVolumeState state);

// ---- What the node volume engine reads of its own rows ----

inline NodeRowState RowStateOf(const std::string& name) {
  return name.empty() ? std::nullopt : NodeVolumeStateFromName(name);
}

inline bool HasState(const std::optional<store::StagingRow>& row, NodeVolumeState state) {
  return row && RowStateOf(row->state) == state;
}

inline bool SameDevice(const store::StagingRow& row, const node::BlockDevice& device) {
  return row.device_name == device.name && row.device_number == device.Number();
}

}  // namespace oxide::engine
