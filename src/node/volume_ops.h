// The blocking sequences behind the node RPCs, composed from the helpers of this folder: publish
// (bind mount), unmount-and-remove, and the health of a mounted or published volume (staging is
// node/stage_plan.h). Every
// function blocks: call them from uv_queue_work, never on the loop thread. Each is idempotent: a
// repeat after a crash finds the work done and answers OK.
#pragma once

#include <string>
#include <vector>

#include "node/device_finder.h"
#include "node/mounter.h"
#include "util/status.h"

namespace oxide::node {

// Whether the mount `entry` at `path` is `device`'s: a filesystem mount carries the device's
// number; a bind-mounted device node (block) must be that block device (stat of `path`).
bool MountBelongsTo(const MountEntry& entry, const BlockDevice& device, bool block,
                    const std::string& path);

// Bind-mounts `source` (the staging directory, or the device node for block volumes) onto
// `target`, created as a directory (or, for block, as an empty file). Already there with this
// device → OK; something else mounted there → FAILED_PRECONDITION.
Status PublishBind(const BlockDevice& device, bool block, const std::string& source,
                   const std::string& target, bool readonly, const MountOptions& options);

// True when the mount `entry` at `path` is of a block device that no longer exists (the disk
// was detached or renumbered under it): nobody's live disk, so a path the CO gave for the
// volume may be unmounted although its device cannot be matched any more.
bool MountOfVanishedDevice(const MountEntry& entry, bool block, const std::string& path);

// The mount points in `mounts` of `device`'s filesystem (mount), or of bind-mounted device nodes
// of `device` (block).
std::vector<std::string> MountsOfDevice(const std::vector<MountEntry>& mounts,
                                        const BlockDevice& device, bool block);

// Unmounts every mount at `path` that belongs to `device` (refusing any that does not, with
// FAILED_PRECONDITION; one still busy after Unmount's wait fails the call the same way), then
// removes `path` (an empty directory or a regular file) when `remove` is set. A missing path is
// fine. With `device` null, only an unmounted path (or a mount of a vanished device) is accepted.
Status UnmountAndRemove(const BlockDevice* device, bool block, const std::string& path,
                        bool remove);

// Empty when the volume at `path` looks healthy; otherwise what is wrong (device vanished, not
// mounted although `expect_mount`, another mount, read-only after errors).
// `present`: whether `device` still exists with its number.
std::string VolumeProblem(bool present, const BlockDevice& device, bool block,
                          const std::string& path, bool expect_mount, bool expect_readonly);

}  // namespace oxide::node
