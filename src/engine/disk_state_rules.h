// What each controller operation answers for a disk in each Oxide state (backend::DiskPhase):
// OK only for the settled states the operation can act on; a retryable UNAVAILABLE while Oxide
// moves the disk on by itself or reports a state this version does not know; FAILED_PRECONDITION
// when a person must act (a faulted disk, an import outside this plugin). docs/disk-states.md has
// the table. Pure: any thread.
#pragma once

#include <string>

#include "backend/oxide_types.h"
#include "util/status.h"

namespace oxide::engine {

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
