// Mounts, bind mounts and unmounts with mount(2)/umount2(2), the mount-option table that turns
// CSI mount_flags into mount(2) flags, and the /proc/self/mountinfo parser. The parser and the
// option table are pure (any thread); everything that touches the system blocks: call it off the
// loop thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace oxide::node {

struct MountEntry {
  unsigned major = 0;
  unsigned minor = 0;
  std::string root;         // path inside the mounted filesystem ("/" or e.g. "/loop3")
  std::string mount_point;  // unescaped
  std::string options;      // per-mount options, e.g. "rw,relatime"
  std::string fs_type;
  std::string source;
  std::string super_options;
  bool ReadOnly() const;
};

// Parses the text of /proc/self/mountinfo (octal escapes such as \040 are decoded). Malformed
// lines are skipped.
std::vector<MountEntry> ParseMountInfo(const std::string& text);
StatusOr<std::vector<MountEntry>> ReadMountInfo();
// The last (topmost) mount at `path`, if any.
std::optional<MountEntry> FindMount(const std::vector<MountEntry>& entries,
                                    const std::string& path);

struct MountOptions {
  unsigned long flags = 0;
  std::string data;  // filesystem-specific options, comma separated
};
// Turns CSI mount_flags into mount(2) flags and data. INVALID_ARGUMENT for options that make no
// sense for a volume mount (bind, rbind, remount, move, propagation changes) or are malformed.
StatusOr<MountOptions> ParseMountFlags(const std::vector<std::string>& mount_flags);

// mount(2) of a filesystem.
Status MountFilesystem(const std::string& device_node, const std::string& target,
                       const std::string& fs_type, const MountOptions& options);
// Bind-mounts `source` onto `target`; with `readonly` (or flags in `options`) the bind is then
// remounted with them (a bind mount ignores flags on its first mount(2)).
Status BindMount(const std::string& source, const std::string& target, bool readonly,
                 const MountOptions& options);
// Unmounts `target` once; on EBUSY retries for about a second, then detaches it lazily as a last
// resort (logged as a warning).
Status Unmount(const std::string& target);

}  // namespace oxide::node
