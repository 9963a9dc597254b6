// What a filesystem's own metadata says about its past, so that an interrupted format of ours is
// told apart from a filesystem someone has used since: whether it was ever mounted after its
// mkfs (ext4: mount count and last mount time, from `tune2fs -l`; XFS: the log sequence number
// in the superblock, from `xfs_db -r`), and whether its mkfs finished (XFS: the superblock's
// inprogress flag, which mkfs.xfs sets first and clears last; mkfs.ext4 writes the primary
// superblock last, so an ext4 superblock that can be read at all is a finished mkfs's). Nothing
// here writes to the device. Runs external programs under
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
  // True only while mkfs's own "in progress" mark is still set (XFS sb_inprogress): the
  // filesystem was never finished, and no kernel mounts it.
  bool mkfs_unfinished = false;
};

// Reads the superblock of the `fs_type` ("ext4" or "xfs") filesystem on `device_node`.
// FAILED_PRECONDITION when there is no readable superblock of that type (an mkfs that did not
// get far enough), INVALID_ARGUMENT for another type, DEADLINE_EXCEEDED when the tool was killed
// at its time limit.
StatusOr<FilesystemHistory> ReadFilesystemHistory(const std::string& device_node,
                                                  const std::string& fs_type,
                                                  const CommandLimits& limits);

}  // namespace oxide::node
