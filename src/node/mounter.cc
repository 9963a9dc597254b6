#include "node/mounter.h"

#include <sys/mount.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "node/kernel_log.h"

namespace oxide::node {
namespace {

std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '3' &&
        field[i + 2] >= '0' && field[i + 2] <= '7' && field[i + 3] >= '0' && field[i + 3] <= '7') {
      out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                      (field[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(field[i]);
    }
  }
  return out;
}

bool HasOption(const std::string& options, const std::string& option) {
  std::istringstream in(options);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == option) return true;
  }
  return false;
}

struct FlagRule {
  const char* name;
  unsigned long set;
  unsigned long clear;
};

constexpr FlagRule kFlagRules[] = {
    {"ro", MS_RDONLY, 0},           {"rw", 0, MS_RDONLY},
    {"nosuid", MS_NOSUID, 0},       {"suid", 0, MS_NOSUID},
    {"nodev", MS_NODEV, 0},         {"dev", 0, MS_NODEV},
    {"noexec", MS_NOEXEC, 0},       {"exec", 0, MS_NOEXEC},
    {"sync", MS_SYNCHRONOUS, 0},    {"async", 0, MS_SYNCHRONOUS},
    {"dirsync", MS_DIRSYNC, 0},     {"noatime", MS_NOATIME, 0},
    {"atime", 0, MS_NOATIME},       {"nodiratime", MS_NODIRATIME, 0},
    {"diratime", 0, MS_NODIRATIME}, {"relatime", MS_RELATIME, 0},
    {"norelatime", 0, MS_RELATIME}, {"strictatime", MS_STRICTATIME, 0},
    {"lazytime", MS_LAZYTIME, 0},   {"defaults", 0, 0},
};

constexpr const char* kRejected[] = {"bind",        "rbind",        "remount",    "move",
                                     "shared",      "rshared",      "slave",      "rslave",
                                     "private",     "rprivate",     "unbindable", "runbindable",
                                     "make-shared", "make-private", "make-slave", "make-unbindable",
                                     "loop",        "user",         "users",      "owner",
                                     "noauto",      "auto",         "_netdev"};

Status Errno(const std::string& what, const std::string& einval_hint = "") {
  int error = errno;
  std::string message = what + ": " + std::strerror(error);
  if (error == EINVAL) return InvalidArgument(message + einval_hint);
  if (error == ENOENT || error == ENOTDIR) return NotFound(message);
  return Internal(message);
}

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string joined;
  for (const std::string& item : items)
    joined += (joined.empty() ? "" : separator) + item;
  return joined;
}

// Whether the kernel's explanation is about the mount's options ("ext4: Unknown parameter 'x'",
// "XFS (loop3): invalid logbufs value: 99").
bool AboutOptions(const std::vector<std::string>& said) {
  for (const std::string& line : said) {
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("parameter") != std::string::npos || lower.find("option") != std::string::npos ||
        (lower.find("invalid ") != std::string::npos &&
         lower.find(" value") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

// The error of a failed mount(2) (errno set), with what the kernel said about it.
Status MountError(const std::string& what, const std::vector<std::string>& said) {
  const int error = errno;
  if (said.empty()) return Errno(what, " (check fs_type and mount_flags)");
  const std::string message =
      what + ": " + std::strerror(error) + "; the kernel said: " + Join(said, "; ");
  if (AboutOptions(said)) return InvalidArgument(message + " (check mount_flags)");
  if (error == EINVAL || error == EUCLEAN || error == EBADMSG || error == EIO) {
    return FailedPrecondition(message);  // a duplicate UUID, corruption, a failing disk
  }
  if (error == ENOENT || error == ENOTDIR) return NotFound(message);
  return Internal(message);
}

// "loop3" for /dev/loop3, also through a symlink (/dev/disk/by-id/...).
std::string DeviceName(const std::string& device_node) {
  char resolved[PATH_MAX];
  std::string path = realpath(device_node.c_str(), resolved) != nullptr ? resolved : device_node;
  return path.substr(path.rfind('/') + 1);
}

}  // namespace

bool MountEntry::ReadOnly() const {
  return HasOption(options, "ro") || HasOption(super_options, "ro");
}

std::vector<MountEntry> ParseMountInfo(const std::string& text) {
  std::vector<MountEntry> entries;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::vector<std::string> fields;
    std::string field;
    while (in >> field)
      fields.push_back(field);
    size_t dash = 0;
    for (size_t i = 6; i < fields.size(); ++i) {
      if (fields[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 2 >= fields.size()) {
      continue;
    }
    MountEntry entry;
    if (std::sscanf(fields[2].c_str(), "%u:%u", &entry.major, &entry.minor) != 2) continue;
    entry.root = Unescape(fields[3]);
    entry.mount_point = Unescape(fields[4]);
    if (entry.mount_point.empty() || entry.mount_point[0] != '/') continue;  // never the kernel's
    entry.options = fields[5];
    entry.fs_type = Unescape(fields[dash + 1]);
    entry.source = Unescape(fields[dash + 2]);
    entry.super_options = dash + 3 < fields.size() ? fields[dash + 3] : "";
    entries.push_back(std::move(entry));
  }
  return entries;
}

StatusOr<std::vector<MountEntry>> ReadMountInfo() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return Internal("cannot read /proc/self/mountinfo");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseMountInfo(buffer.str());
}

std::optional<MountEntry> FindMount(const std::vector<MountEntry>& entries,
                                    const std::string& path) {
  std::optional<MountEntry> found;
  for (const MountEntry& entry : entries) {
    if (entry.mount_point == path) found = entry;
  }
  return found;
}

StatusOr<MountOptions> ParseMountFlags(const std::vector<std::string>& mount_flags) {
  MountOptions options;
  for (const std::string& raw : mount_flags) {
    std::istringstream in(raw);
    std::string flag;
    while (std::getline(in, flag, ',')) {
      if (flag.empty()) continue;
      if (flag.find_first_of(" \t\n\\") != std::string::npos ||
          flag.find('\0') != std::string::npos) {
        return InvalidArgument("mount flag \"" + flag + "\" contains whitespace or a backslash");
      }
      for (const char* rejected : kRejected) {
        if (flag == rejected) {
          return InvalidArgument("mount flag \"" + flag +
                                 "\" makes no sense for a volume mount; the plugin decides how it "
                                 "mounts (remove the flag from the StorageClass mountOptions)");
        }
      }
      bool known = false;
      for (const FlagRule& rule : kFlagRules) {
        if (flag == rule.name) {
          options.flags = (options.flags | rule.set) & ~rule.clear;
          known = true;
        }
      }
      if (!known) options.data += (options.data.empty() ? "" : ",") + flag;
    }
  }
  return options;
}

Status MountFilesystem(const std::string& device_node, const std::string& target,
                       const std::string& fs_type, const MountOptions& options) {
  std::string data = options.data;
  if (fs_type == "xfs" && !HasOption(data, "nouuid")) data += data.empty() ? "nouuid" : ",nouuid";
  KernelLogCursor log;  // what the kernel logs from here on explains a failure
  if (mount(device_node.c_str(), target.c_str(), fs_type.c_str(), options.flags,
            data.empty() ? nullptr : data.c_str()) == 0) {
    return Status::Ok();
  }
  const int error = errno;
  std::vector<std::string> said = log.MessagesAbout(DeviceName(device_node), fs_type, 5);
  errno = error;
  return MountError("mount " + device_node + " on " + target + " (" + fs_type + ")", said);
}

Status BindMount(const std::string& source, const std::string& target, bool readonly,
                 const MountOptions& options) {
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return Errno("bind mount " + source + " on " + target, " (check mount_flags)");
  }
  unsigned long flags = options.flags | (readonly ? MS_RDONLY : 0);
  if (flags != 0) {
    if (mount(nullptr, target.c_str(), nullptr, MS_REMOUNT | MS_BIND | flags, nullptr) != 0) {
      Status failed = Errno("remount of the bind mount " + target, " (check mount_flags)");
      umount2(target.c_str(), 0);
      return failed;
    }
  }
  return Status::Ok();
}

Status Unmount(const std::string& target, std::chrono::milliseconds busy_wait) {
  const auto deadline = std::chrono::steady_clock::now() + busy_wait;
  for (;;) {
    if (umount2(target.c_str(), UMOUNT_NOFOLLOW) == 0) return Status::Ok();
    if (errno != EBUSY) return Errno("unmount " + target);
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) break;
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(50)));
  }
  std::vector<std::string> reasons;
  if (std::vector<std::string> holders = HoldersOf(target); !holders.empty()) {
    reasons.push_back("still in use by " + Join(holders, ", "));
  }
  if (auto mounts = ReadMountInfo(); mounts.ok()) {
    std::vector<std::string> below;
    for (const MountEntry& entry : *mounts) {
      if (below.size() < 5 && entry.mount_point.size() > target.size() + 1 &&
          entry.mount_point.compare(0, target.size() + 1, target + "/") == 0) {
        below.push_back(entry.mount_point);
      }
    }
    if (!below.empty()) reasons.push_back("mounts below it: " + Join(below, ", "));
  }
  if (reasons.empty()) {
    reasons.push_back(
        "no process of this mount namespace holds it (the kernel, or a process "
        "in another namespace, does)");
  }
  return FailedPrecondition(target + " is busy: " + Join(reasons, "; ") +
                            "; the unmount is retried when they let go");
}

}  // namespace oxide::node
