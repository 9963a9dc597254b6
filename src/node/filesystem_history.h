// What a filesystem's own metadata says about its past, so that an interrupted format of ours is
// told apart from a filesystem someone has used since: whether it was ever mounted after its
// mkfs (ext4: mount count and last mount time, from `tune2fs -l`; XFS: the log sequence number
// in the superblock, from `xfs_db -r`), and whether it is complete (a read-only check: `e2fsck
// -n`, `xfs_repair -n`). Nothing here writes to the device. Runs external programs under
// `limits.command` and blocks: call off the loop thread; safe from several worker threads at once.
#pragma once

#include <string>

#include "node/command_runner.h"
#include "util/status.h"

namespace oxide::node {

struct FilesystemHistory {
  std::string uuid;  // as the superblock says, lowercase
  // True when the filesystem shows it has been mounted (read-write for ext4; at all for XFS)
  // since mkfs made it; also for an XFS V4 filesystem, whose superblock cannot tell.
  bool mounted_since_mkfs = false;
  // What showed it, for messages: "mount count 1, last mounted Fri Nov 27 14:45:38 2026" or
  // "log sequence number 0x100000002".
  std::string evidence;
};

// Reads the superblock of the `fs_type` ("ext4" or "xfs") filesystem on `device_node`.
// FAILED_PRECONDITION when there is no readable superblock of that type (an mkfs that did not
// get far enough), INVALID_ARGUMENT for another type, DEADLINE_EXCEEDED when the tool was killed
// at its time limit.
StatusOr<FilesystemHistory> ReadFilesystemHistory(const std::string& device_node,
                                                  const std::string& fs_type,
                                                  const CommandLimits& limits);

// True when the read-only check of the filesystem finds nothing wrong (`e2fsck -n` without -f:
// the superblock, group descriptors and a clean state; `xfs_repair -n`: all metadata), false
// when it finds a problem or no filesystem. A filesystem whose log or journal still needs replay
// (it was in use when the machine stopped) is not complete by this check. UNAVAILABLE while the
// device is mounted or opened exclusively by another program (the check would be meaningless).
StatusOr<bool> FilesystemIsComplete(const std::string& device_node, const std::string& fs_type,
                                    const CommandLimits& limits);

}  // namespace oxide::node
