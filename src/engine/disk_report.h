// What Oxide's report of a disk means to the volume engine's steps: whether an instance holds it,
// whether Oxide is still moving it on, and the volume row the report leaves (through the state
// table of engine/volume_state.h). Pure: any thread.
#pragma once

#include <optional>
#include <string>

#include "backend/oxide_client.h"
#include "engine/volume_state.h"
#include "store/volume_store.h"
#include "util/status.h"

namespace oxide::engine {

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

}  // namespace oxide::engine
