#include "node/encrypted_volume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "node/filesystem_probe.h"
#include "node/luks.h"
#include "node/mounter.h"
#include "node/volume_ops.h"
#include "util/log.h"

namespace oxide::node {
namespace {

// LUKS1 and LUKS2 both begin with this magic (LUKS2 keeps a second copy further in).
constexpr char kLuksMagic[] = {'L', 'U', 'K', 'S', '\xba', '\xbe'};

// Whether the disk may be encrypted now: blank, or holding only unsigned data that our own
// luksFormat, interrupted, left under a format intent (an encrypted volume used anywhere starts
// with a LUKS header, so such data is nobody's).
StatusOr<std::string> CheckEncryptable(const BlockDevice& disk, bool format_intent,
                                       const CommandLimits& limits) {
  StatusOr<DeviceContent> content = ProbeDevice(disk.node, limits);
  if (!content.ok()) return content.status();
  if (content->kind == DeviceContent::Kind::kBlank) return std::string("the disk is blank");
  if (content->kind == DeviceContent::Kind::kUnknownData && format_intent) {
    return std::string("our interrupted encryption left data without a signature");
  }
  const std::string what = content->kind == DeviceContent::Kind::kFilesystem
                               ? "a " + content->fs_type + " filesystem"
                               : content->detail;
  return FailedPrecondition(disk.node + " holds " + what +
                            ", not an encrypted volume; an encrypted volume is only ever made on a "
                            "blank disk, so it is not encrypted (its data is left as it is)");
}

bool InUse(const std::vector<MountEntry>& mounts, const BlockDevice& mapper) {
  return !MountsOfDevice(mounts, mapper, false).empty() ||
         !MountsOfDevice(mounts, mapper, true).empty();
}

}  // namespace

bool HoldsLuksHeader(const std::string& device_node) {
  int fd = open(device_node.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char start[sizeof kLuksMagic] = {};
  ssize_t n = pread(fd, start, sizeof start, 0);
  close(fd);
  return n == static_cast<ssize_t>(sizeof start) &&
         std::memcmp(start, kLuksMagic, sizeof start) == 0;
}

StatusOr<std::optional<BlockDevice>> MappingOnDisk(const BlockDevice& disk,
                                                   const std::string& serial,
                                                   const CommandLimits& limits) {
  const std::string name = MapperName(serial);
  StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(name, limits);
  if (!mapping.ok()) return mapping.status();
  if (!*mapping) return std::optional<BlockDevice>();
  if ((*mapping)->backing_number == disk.Number()) {
    return std::optional<BlockDevice>((*mapping)->mapper);
  }
  // Left from an earlier attachment of the disk: its device has gone or is another one now.
  Status closed = LuksClose(name, limits);
  if (!closed.ok()) {
    return FailedPrecondition("the encrypted mapping " + name + " sits on " +
                              (*mapping)->backing_node + ", not on the volume's disk " + disk.node +
                              " (" + disk.Number() +
                              "), and cannot be closed: " + closed.message());
  }
  log::Warn("closed an encrypted mapping left on another device than the volume's disk",
            {{"mapping", name}, {"was_on", (*mapping)->backing_node}, {"disk", disk.node}});
  return std::optional<BlockDevice>();
}

StatusOr<EncryptedDisk> OpenEncryptedDisk(const BlockDevice& disk, const std::string& serial,
                                          const std::string& passphrase, bool format_intent,
                                          const CommandLimits& limits) {
  StatusOr<std::optional<BlockDevice>> open = MappingOnDisk(disk, serial, limits);
  if (!open.ok()) return open.status();
  if (*open) return EncryptedDisk{.mapper = **open, .blank = false, .reason = "already open"};
  if (HoldsLuksHeader(disk.node)) {
    StatusOr<BlockDevice> opened = LuksOpen(disk, MapperName(serial), passphrase, limits);
    if (!opened.ok()) return opened.status();
    return EncryptedDisk{.mapper = *opened, .blank = false, .reason = "opened its LUKS header"};
  }
  StatusOr<std::string> encryptable = CheckEncryptable(disk, format_intent, limits);
  if (!encryptable.ok()) return encryptable.status();
  return EncryptedDisk{.mapper = std::nullopt, .blank = true, .reason = *encryptable};
}

StatusOr<BlockDevice> EncryptBlankDisk(const BlockDevice& disk, const std::string& serial,
                                       const std::string& passphrase, bool format_intent,
                                       const CommandLimits& limits) {
  StatusOr<std::string> encryptable = CheckEncryptable(disk, format_intent, limits);
  if (!encryptable.ok()) return encryptable.status();
  if (Status made = LuksFormat(disk, passphrase, limits); !made.ok()) return made;
  return LuksOpen(disk, MapperName(serial), passphrase, limits);
}

StatusOr<BlockDevice> VolumeDeviceOf(const StatusOr<BlockDevice>& disk, const std::string& serial,
                                     const CommandLimits& limits) {
  if (!disk.ok()) {
    // The disk is gone; a mapping of the volume may still stand on what is left of it.
    StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(MapperName(serial), limits);
    if (mapping.ok() && *mapping) return (*mapping)->mapper;
    return disk.status();
  }
  StatusOr<std::optional<BlockDevice>> open = MappingOnDisk(*disk, serial, limits);
  if (!open.ok()) return open.status();
  if (*open) return **open;
  if (HoldsLuksHeader(disk->node)) {
    return FailedPrecondition("the volume's disk " + disk->node +
                              " is encrypted and not open on this node; stage the volume again");
  }
  return *disk;
}

bool IsMapping(const BlockDevice& device) {
  return device.node.rfind("/dev/mapper/", 0) == 0;
}

bool MappingStillPresent(const BlockDevice& device) {
  struct stat info {};
  return stat(device.node.c_str(), &info) == 0 && S_ISBLK(info.st_mode) &&
         major(info.st_rdev) == device.major && minor(info.st_rdev) == device.minor;
}

Status CloseVolumeMapping(const std::string& serial, const CommandLimits& limits) {
  return LuksClose(MapperName(serial), limits);
}

std::vector<std::string> CloseUnusedMappings(const std::vector<std::string>& keep_serials,
                                             const CommandLimits& limits) {
  std::vector<std::string> closed;
  std::vector<std::string> names = ListPluginMappings();
  if (names.empty()) return closed;
  auto mounts = ReadMountInfo();
  if (!mounts.ok()) {
    log::Warn("open encrypted mappings were not checked: the mount table cannot be read",
              {{"error", mounts.status().message()}});
    return closed;
  }
  for (const std::string& name : names) {
    const std::string serial = name.substr(std::strlen(kMapperPrefix));
    if (std::find(keep_serials.begin(), keep_serials.end(), serial) != keep_serials.end()) continue;
    StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(name, limits);
    if (!mapping.ok() || !*mapping) continue;
    if (InUse(*mounts, (*mapping)->mapper)) {
      log::Warn("an encrypted mapping no volume row names is mounted: left open",
                {{"mapping", name}});
      continue;
    }
    if (Status done = LuksClose(name, limits); !done.ok()) {
      log::Warn("an unused encrypted mapping could not be closed",
                {{"mapping", name}, {"error", done.message()}});
      continue;
    }
    log::Info("closed an encrypted mapping no staged volume uses", {{"mapping", name}});
    closed.push_back(name);
  }
  return closed;
}

}  // namespace oxide::node
