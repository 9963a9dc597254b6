#include "node/formatter.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <vector>

#include "metrics/plugin_metrics.h"

namespace oxide::node {
namespace {

bool IsLowerHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

std::string RandomUuid() {
  std::random_device random;
  unsigned char bytes[16];
  for (unsigned char& byte : bytes)
    byte = static_cast<unsigned char>(random() & 0xff);
  bytes[6] = static_cast<unsigned char>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<unsigned char>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string uuid;
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) uuid.push_back('-');
    std::snprintf(hex, sizeof hex, "%02x", bytes[i]);
    uuid += hex;
  }
  return uuid;
}

}  // namespace

bool IsSupportedFilesystem(const std::string& fs_type) {
  return fs_type == "ext4" || fs_type == "xfs";
}

bool IsCanonicalUuid(const std::string& uuid) {
  if (uuid.size() != 36) return false;
  bool all_zero = true;
  for (size_t i = 0; i < uuid.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? uuid[i] != '-' : !IsLowerHex(uuid[i])) return false;
    if (!dash && uuid[i] != '0') all_zero = false;
  }
  return !all_zero;
}

std::string NewFilesystemUuid() {
  std::ifstream in("/proc/sys/kernel/random/uuid");
  std::string uuid;
  if (in >> uuid && IsCanonicalUuid(uuid)) return uuid;
  return RandomUuid();
}

Status MakeFilesystem(const std::string& device_node, const std::string& fs_type, bool force,
                      const std::string& uuid, const CommandLimits& limits,
                      const FilesystemOptions& options, const std::string& xfs_profile) {
  if (!IsSupportedFilesystem(fs_type)) {
    return InvalidArgument("cannot create filesystem type \"" + fs_type + "\"");
  }
  if (!IsCanonicalUuid(uuid)) {
    return InvalidArgument("\"" + uuid + "\" is not a filesystem UUID in canonical form");
  }
  // Without `force`, mkfs refuses on its own if it finds a signature we missed.
  std::vector<std::string> argv;
  if (fs_type == "ext4") {
    argv = {"mkfs.ext4", "-q"};
    if (force) argv.push_back("-F");
    argv.insert(argv.end(), {"-U", uuid});
  } else {
    argv = {"mkfs.xfs", "-q"};
    if (force) argv.push_back("-f");
    StatusOr<std::vector<std::string>> features = XfsFeatureArguments(xfs_profile);
    if (!features.ok()) return features.status();
    argv.insert(argv.end(), features->begin(), features->end());
    argv.insert(argv.end(), {"-m", "uuid=" + uuid});
  }
  std::vector<std::string> chosen = MkfsOptionArguments(options, fs_type);
  argv.insert(argv.end(), chosen.begin(), chosen.end());
  argv.push_back(device_node);
  const auto started = std::chrono::steady_clock::now();
  auto run = RunCommand(argv, limits.format);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) return Internal("formatting failed: " + DescribeFailure(argv, *run));
  metrics::Families().mkfs_duration.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return Status::Ok();
}

Status CheckFilesystem(const std::string& device_node, const std::string& fs_type,
                       const CommandLimits& limits) {
  if (fs_type != "ext4") return Status::Ok();
  std::vector<std::string> argv = {"fsck.ext4", "-p", device_node};
  auto run = RunCommand(argv, limits.check);
  if (!run.ok()) return run.status();
  if (run->exit_code == 0 || run->exit_code == 1) return Status::Ok();
  return FailedPrecondition("the filesystem check found problems it could not fix: " +
                            DescribeFailure(argv, *run) + "; repair the disk by hand");
}

}  // namespace oxide::node
