// The controller volume's states, its own and Oxide's disk's, and how one reads the other.
// The volume's state machine is the controller's half of the per-volume state machine (CSI spec
// figure 6): CREATED and NODE_READY with the transitional states persisted before Oxide is asked,
// the events that move a row, and the one table of legal transitions that every change of a
// controller row goes through. "No row" is a state too (std::nullopt). Requests may start only
// from a stable state; Oxide's answer about the disk holds in every state, because Oxide, not this
// record, is the truth. A failed operation is not an event: its row returns to what it was before
// the operation. The node service persists VOL_READY and PUBLISHED.
// What Oxide's report of a disk means to the volume engine's steps: whether an instance holds it,
// whether Oxide is still moving it on, and the volume row the report leaves (through the table
// above).
// What each controller operation answers for a disk in each Oxide state (backend::DiskPhase): OK
// only for the settled states the operation can act on; a retryable UNAVAILABLE while Oxide moves
// the disk on by itself or reports a state this version does not know; FAILED_PRECONDITION when a
// person must act (a faulted disk, an import outside this plugin). docs/disk-states.md has the
// table.
// Pure: any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "backend/oxide_types.h"
#include "store/volume_store.h"
#include "util/status.h"

namespace oxide::engine {

// ---- The volume's state machine ----

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

// ---- What Oxide's report of a disk means ----

// An instance holds the disk: attached, or attaching (detaching counts as let go).
bool IsAttachedOrAttaching(const backend::Disk& disk);
// ... and that instance is `node`.
bool IsAttachedOrAttachingTo(const backend::Disk& disk, const std::string& node);
// Oxide is moving the disk on by itself (made, repaired, attached or detached): wait for it.
bool IsSettling(const backend::Disk& disk);
std::string StatusText(const backend::Disk& disk);
// An answer without disk_type (older than local disks) is of a distributed disk.
std::string DiskTypeOf(const backend::Disk& disk);

// The volume row Oxide's report of `disk` leaves, moved through the state table from `from` (the
// row's state before the report; nullopt: no row).
StatusOr<store::VolumeRow> RowAfterReport(const backend::Disk& disk, const std::string& co_name,
                                          VolumeRowState from);
// The state a request moves a row in state `from` to.
StatusOr<VolumeState> RequestedState(VolumeRowState from, VolumeEvent request);
// The state of `row` (nullopt: no row, or a state name this version does not know).
VolumeRowState StateOf(const std::optional<store::VolumeRow>& row);

// ---- What each controller operation answers for a disk in each Oxide state ----

// CreateVolume found the volume's disk (ours, right shape): Ok to answer it as the volume.
Status RefusalToKeep(const backend::Disk& disk);
// ControllerPublishVolume to `node`: Ok to ask Oxide to attach (or it already is attached there).
Status RefusalToAttach(const backend::Disk& disk, const std::string& node);

enum class DetachStep { kNothingToDo, kDetach, kRefuse };
// ControllerUnpublishVolume from `node`: whether the disk is held there; kRefuse while Oxide
// attaches it there or reports a state this version does not know (RefusalToDetach() says why).
DetachStep DetachStepFor(const backend::Disk& disk, const std::string& node);
Status RefusalToDetach(const backend::Disk& disk);
// DeleteVolume after Oxide refused the delete: why, from the state Oxide reports now.
Status RefusalToDelete(const backend::Disk& disk);

}  // namespace oxide::engine
