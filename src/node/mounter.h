// Mounts, bind mounts and unmounts with mount(2)/umount2(2), the mount-option table that turns
// CSI mount_flags into mount(2) flags, the /proc/self/mountinfo parser, and what explains a failed
// mount or unmount: the kernel's messages about a device (/dev/kmsg) and the processes holding a
// mount (/proc/<pid>). The parser and the option table are pure (any thread); everything that
// touches the system blocks: call it off the loop thread (several worker threads at once are fine).
#pragma once

#include <chrono>
#include <cstddef>
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

// mount(2) of a filesystem. XFS is mounted with `nouuid` (added unless the data has it) so that
// restores and clones, which carry their source's UUID, mount beside it. A failure carries what
// the kernel logged about the device during the call ("...; the kernel said: XFS (loop3): ...");
// EINVAL is INVALID_ARGUMENT when the kernel gave no reason or refused an option, and
// FAILED_PRECONDITION when it named another cause (a duplicate UUID, corruption).
Status MountFilesystem(const std::string& device_node, const std::string& target,
                       const std::string& fs_type, const MountOptions& options);
// Bind-mounts `source` onto `target`; with `readonly` (or flags in `options`) the bind is then
// remounted with them (a bind mount ignores flags on its first mount(2)).
Status BindMount(const std::string& source, const std::string& target, bool readonly,
                 const MountOptions& options);
// Unmounts `target`, never lazily: on EBUSY it tries again (pausing briefly) for `busy_wait`,
// then fails with FAILED_PRECONDITION naming up to 5 holders (HoldersOf) and any mounts below
// it; `target` is then still mounted.
Status Unmount(const std::string& target,
               std::chrono::milliseconds busy_wait = std::chrono::seconds(2));

// The texts of the last `max_lines` kernel log records (/dev/kmsg, read without blocking) that
// name the device `device_name` (e.g. "loop3", as a whole word), without the record prefix.
// Empty when the log cannot be read (no CAP_SYSLOG, no /dev/kmsg in the container).
std::vector<std::string> KernelMessagesAbout(const std::string& device_name, size_t max_lines = 5);

// Up to `max` processes whose working directory, root, executable or an open file is
// `mount_point` or below it, as "pid 1234 (cat)". Bounded work: at most about 100000 links read.
std::vector<std::string> HoldersOf(const std::string& mount_point, size_t max = 5);

}  // namespace oxide::node
