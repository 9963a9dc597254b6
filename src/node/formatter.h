// Creates and checks filesystems (mkfs.ext4 / mkfs.xfs, fsck.ext4) under the time limits of
// CommandLimits. Runs external programs and blocks: call off the loop thread; safe from several
// worker threads at once. The caller has established from the device itself (ProbeDevice,
// ReadFilesystemHistory) that formatting destroys nothing before calling MakeFilesystem.
#pragma once

#include <string>

#include "node/command_runner.h"
#include "node/filesystem_options.h"
#include "util/status.h"

namespace oxide::node {

// True for the filesystem types the node can create: "ext4" and "xfs".
bool IsSupportedFilesystem(const std::string& fs_type);

// True for a UUID in canonical form: 36 characters, lowercase hex digits and dashes (8-4-4-4-12),
// not all zeros.
bool IsCanonicalUuid(const std::string& uuid);

// A new random (version 4) UUID in canonical form, from /proc/sys/kernel/random/uuid or, when
// that cannot be read, from std::random_device.
std::string NewFilesystemUuid();

// mkfs.ext4 -q [-F] -U <uuid> [options] | mkfs.xfs -q [-f] <xfs_profile's features>
// -m uuid=<uuid> [options], within `limits.format` (MkfsOptionArguments, XfsFeatureArguments).
// `force` (-F, -f) only to redo a format of our own that a crash interrupted. INVALID_ARGUMENT
// for another type or a `uuid` that is not canonical (IsCanonicalUuid); DEADLINE_EXCEEDED when
// mkfs was killed at its time limit; INTERNAL when it failed (mkfs's message says why: an option
// that does not fit the device's size, for one).
Status MakeFilesystem(const std::string& device_node, const std::string& fs_type, bool force,
                      const std::string& uuid, const CommandLimits& limits,
                      const FilesystemOptions& options = {},
                      const std::string& xfs_profile = kDefaultXfsFeatureProfile);

// The check a filesystem needs before mounting, within `limits.command`: `fsck.ext4 -p` for ext4
// (exit 0 or 1 is fine); nothing for xfs, whose log is replayed by the kernel at mount
// (xfs_repair is not an fsck).
Status CheckFilesystem(const std::string& device_node, const std::string& fs_type,
                       const CommandLimits& limits);

}  // namespace oxide::node
