#include "node/encrypted_volume.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "node/filesystem_probe.h"
#include "node/luks.h"
#include "node/mounter.h"
#include "node/volume_ops.h"
#include "util/log.h"

namespace oxide::node {
namespace {

namespace fs = std::filesystem;

// LUKS1 and LUKS2 both begin with this magic (LUKS2 keeps a second copy further in).
constexpr char kLuksMagic[] = {'L', 'U', 'K', 'S', '\xba', '\xbe'};

// Under a format intent of ours: a LUKS header without any key slot is what luksFormat leaves
// when it is stopped between writing the header and adding the slot; no one can have opened it.
StatusOr<bool> InterruptedLuksFormat(const BlockDevice& disk, bool format_intent,
                                     const CommandLimits& limits) {
  if (!format_intent) return false;
  StatusOr<LuksHeader> header = ReadLuksHeader(disk, limits);
  if (!header.ok()) return header.status();
  return header->keyslots == 0;
}

// Whether the disk may be encrypted now: blank, or under a format intent of ours holding only
// what our own interrupted luksFormat can leave (data without a signature, or a LUKS header
// without a key slot); an encrypted volume in use anywhere has a LUKS header with a key slot,
// so such data is nobody's.
StatusOr<std::string> CheckEncryptable(const BlockDevice& disk, bool format_intent,
                                       const CommandLimits& limits) {
  StatusOr<bool> luks = HoldsLuksHeader(disk.node);
  if (!luks.ok()) return luks.status();
  if (*luks) {
    StatusOr<bool> interrupted = InterruptedLuksFormat(disk, format_intent, limits);
    if (!interrupted.ok()) return interrupted.status();
    if (*interrupted) {
      return std::string("our interrupted encryption left a LUKS header without a key slot");
    }
    return FailedPrecondition(disk.node + " holds a LUKS header; it is never encrypted again");
  }
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

// Closes the mapping `name` (of `mapper`) unless something uses it.
Status CloseIfUnused(const std::string& name, const BlockDevice& mapper,
                     const CommandLimits& limits) {
  StatusOr<bool> used = MappingInUse(mapper);
  if (!used.ok()) return used.status();
  if (*used) {
    return FailedPrecondition("the encrypted mapping " + name + " (" + mapper.Number() +
                              ") is still in use (mounted, bind-mounted or held)");
  }
  return LuksClose(name, limits);
}

std::optional<std::string> HolderOf(const BlockDevice& device) {
  std::error_code ec;
  const fs::path holders = fs::path("/sys/dev/block") / device.Number() / "holders";
  for (fs::directory_iterator it(holders, ec), end; !ec && it != end; it.increment(ec)) {
    return it->path().filename().string();
  }
  return std::nullopt;
}

}  // namespace

StatusOr<bool> HoldsLuksHeader(const std::string& device_node) {
  int fd = open(device_node.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Unavailable("cannot open " + device_node +
                       " to look for a LUKS header: " + std::strerror(errno));
  }
  char start[sizeof kLuksMagic] = {};
  ssize_t n = pread(fd, start, sizeof start, 0);
  const int error = errno;
  close(fd);
  if (n != static_cast<ssize_t>(sizeof start)) {
    return Unavailable("cannot read the start of " + device_node +
                       (n < 0 ? std::string(": ") + std::strerror(error) : std::string()));
  }
  return std::memcmp(start, kLuksMagic, sizeof start) == 0;
}

StatusOr<bool> MappingInUse(const BlockDevice& mapper) {
  auto mounts = ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  for (const MountEntry& entry : *mounts) {
    if (entry.major == mapper.major && entry.minor == mapper.minor) return true;
    struct stat info {};
    // A bind mount of the device node: the mount point is the device itself.
    if (entry.fs_type == "devtmpfs" && stat(entry.mount_point.c_str(), &info) == 0 &&
        S_ISBLK(info.st_mode) && major(info.st_rdev) == mapper.major &&
        minor(info.st_rdev) == mapper.minor) {
      return true;
    }
  }
  return HolderOf(mapper).has_value();
}

StatusOr<std::optional<BlockDevice>> MappingOnDisk(const BlockDevice& disk,
                                                   const std::string& serial, bool may_close,
                                                   const CommandLimits& limits) {
  const std::string name = MapperName(serial);
  StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(name, limits);
  if (!mapping.ok()) return mapping.status();
  if (!*mapping) return std::optional<BlockDevice>();
  if ((*mapping)->backing_number == disk.Number()) {
    return std::optional<BlockDevice>((*mapping)->mapper);
  }
  // Left from an earlier attachment of the disk: its device has gone or is another one now.
  const std::string where = "the encrypted mapping " + name + " sits on " +
                            (*mapping)->backing_node + ", not on the volume's disk " + disk.node +
                            " (" + disk.Number() + ")";
  if (!may_close) return FailedPrecondition(where + "; stage the volume again");
  if (Status closed = CloseIfUnused(name, (*mapping)->mapper, limits); !closed.ok()) {
    return FailedPrecondition(where + ", and cannot be closed: " + closed.message());
  }
  log::Warn("closed an encrypted mapping left on another device than the volume's disk",
            {{"mapping", name}, {"was_on", (*mapping)->backing_node}, {"disk", disk.node}});
  return std::optional<BlockDevice>();
}

StatusOr<EncryptedDisk> OpenEncryptedDisk(const BlockDevice& disk, const std::string& serial,
                                          const std::string& passphrase, bool format_intent,
                                          const CommandLimits& limits) {
  StatusOr<std::optional<BlockDevice>> open = MappingOnDisk(disk, serial, true, limits);
  if (!open.ok()) return open.status();
  if (*open) {
    // Opened by an earlier call: this call's passphrase must open the volume too.
    if (Status key = LuksTestPassphrase(disk, passphrase, limits); !key.ok()) return key;
    return EncryptedDisk{.mapper = **open, .blank = false, .reason = "already open"};
  }
  StatusOr<bool> luks = HoldsLuksHeader(disk.node);
  if (!luks.ok()) return luks.status();
  if (*luks) {
    StatusOr<LuksHeader> header = ReadLuksHeader(disk, limits);
    if (!header.ok()) return header.status();
    if (header->keyslots == 0) {
      StatusOr<std::string> again = CheckEncryptable(disk, format_intent, limits);
      if (!again.ok()) {
        return FailedPrecondition(disk.node +
                                  " holds a LUKS header without any key slot (an encryption "
                                  "interrupted before its key was added?); no passphrase can open "
                                  "it, and it is not made again without a format intent of this "
                                  "node");
      }
      return EncryptedDisk{.mapper = std::nullopt, .blank = true, .reason = *again};
    }
    if (header->max_kdf_memory_kib > kMaxKdfMemoryKib) {
      return FailedPrecondition(
          disk.node + "'s LUKS header asks for " + std::to_string(header->max_kdf_memory_kib) +
          " KiB of memory to derive its key; the node opens headers that ask for at most " +
          std::to_string(kMaxKdfMemoryKib) +
          " KiB (its memory limit); add a key slot with less (cryptsetup luksAddKey "
          "--pbkdf-memory) elsewhere");
    }
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
                                     bool encrypted, const CommandLimits& limits) {
  if (!encrypted) return disk;
  if (!disk.ok()) {
    // The disk is gone; the volume's mapping may still stand on what is left of it.
    StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(MapperName(serial), limits);
    if (mapping.ok() && *mapping) return (*mapping)->mapper;
    return disk.status();
  }
  StatusOr<std::optional<BlockDevice>> open = MappingOnDisk(*disk, serial, false, limits);
  if (!open.ok()) return open.status();
  if (*open) return **open;
  return FailedPrecondition("the volume is encrypted and its disk " + disk->node +
                            " is not open on this node; stage the volume again");
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
  const std::string name = MapperName(serial);
  StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(name, limits);
  if (!mapping.ok()) return mapping.status();
  if (!*mapping) return Status::Ok();
  return CloseIfUnused(name, (*mapping)->mapper, limits);
}

std::vector<std::string> CloseUnusedMappings(const std::vector<std::string>& keep_serials,
                                             const CommandLimits& limits) {
  std::vector<std::string> closed;
  for (const std::string& name : ListPluginMappings()) {
    const std::string serial = name.substr(std::strlen(kMapperPrefix));
    if (std::find(keep_serials.begin(), keep_serials.end(), serial) != keep_serials.end()) continue;
    StatusOr<std::optional<LuksMapping>> mapping = FindLuksMapping(name, limits);
    if (!mapping.ok() || !*mapping) continue;
    if (Status done = CloseIfUnused(name, (*mapping)->mapper, limits); !done.ok()) {
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
