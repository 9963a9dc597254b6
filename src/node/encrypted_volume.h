// An encrypted volume's two devices, re-derived from the system each time: the disk (found by
// NVMe serial) holds a LUKS2 header, and the volume's filesystem or blocks live on the open
// mapping /dev/mapper/oxide-csi-<serial> that sits on that disk. Decides when a disk may be
// encrypted (only when blank), opens and closes the mapping, and tells every other node call
// which device is the volume's. Rules and settings: docs/encryption.md. Every function blocks
// (cryptsetup, blkid, sysfs and /dev reads): call off the loop thread; safe from several worker
// threads for different volumes.
#pragma once

#include <optional>
#include <string>

#include "node/command_runner.h"
#include "node/device_finder.h"
#include "util/status.h"

namespace oxide::node {

// The StorageClass parameter and the NodeStage secret key of encrypted volumes.
inline constexpr const char* kEncryptedParameter = "encrypted";
inline constexpr const char* kPassphraseSecretKey = "encryptionPassphrase";

// True when `device_node` starts with a LUKS header (LUKS1 or LUKS2 magic). A read of 6 bytes.
bool HoldsLuksHeader(const std::string& device_node);

// The volume's open mapping when it sits on `disk`; nullopt when none is open. A mapping of the
// volume's name left on another device (an earlier attachment of the disk) is closed when unused,
// FAILED_PRECONDITION when in use.
StatusOr<std::optional<BlockDevice>> MappingOnDisk(const BlockDevice& disk,
                                                   const std::string& serial,
                                                   const CommandLimits& limits);

// What the disk of an encrypted volume offers before staging.
struct EncryptedDisk {
  std::optional<BlockDevice> mapper;  // the open mapping (it was open, or opened now)
  bool blank = false;                 // no mapping: the disk is blank and is to be encrypted
  std::string reason;                 // what on the disk decided it, for the log
};

// Opens the volume's mapping if the disk holds a LUKS header (FAILED_PRECONDITION "the passphrase
// does not open this volume" when it does not take `passphrase`); reports a blank disk (or, under
// a format intent of ours, data without any signature: our interrupted luksFormat) as blank.
// Anything else on the disk is refused with FAILED_PRECONDITION: an encrypted volume is never
// made over data.
StatusOr<EncryptedDisk> OpenEncryptedDisk(const BlockDevice& disk, const std::string& serial,
                                          const std::string& passphrase, bool format_intent,
                                          const CommandLimits& limits);

// luksFormat of `disk` after checking once more, right before, that it is still blank (or holds
// only unsigned data under a format intent), then opens it. Returns the mapping.
StatusOr<BlockDevice> EncryptBlankDisk(const BlockDevice& disk, const std::string& serial,
                                       const std::string& passphrase, bool format_intent,
                                       const CommandLimits& limits);

// The device that holds the volume with `serial` as it is now: the open mapping on its disk for
// an encrypted volume, else the disk. `disk` is the disk found by serial, or its error. When the
// disk is gone but the volume's mapping is still open (the disk was detached under it), the
// mapping, so that its mounts can still be recognised and undone. FAILED_PRECONDITION when the
// disk holds a LUKS header and no mapping is open: the volume's data is not reachable until it
// is staged again (its ciphertext is never handed on).
StatusOr<BlockDevice> VolumeDeviceOf(const StatusOr<BlockDevice>& disk, const std::string& serial,
                                     const CommandLimits& limits);

// True when `device` is an open mapping of this plugin (its node is under /dev/mapper).
bool IsMapping(const BlockDevice& device);

// Whether the mapping `device` still exists with its device number.
bool MappingStillPresent(const BlockDevice& device);

// Closes the volume's mapping; OK when none is open. FAILED_PRECONDITION when in use.
Status CloseVolumeMapping(const std::string& serial, const CommandLimits& limits);

// Closes every mapping of this plugin that no mount uses and no serial in `keep` names (start-up:
// the rows of volumes staged or being staged). Returns the names closed; one that cannot be
// closed is logged and left.
std::vector<std::string> CloseUnusedMappings(const std::vector<std::string>& keep_serials,
                                             const CommandLimits& limits);

}  // namespace oxide::node
