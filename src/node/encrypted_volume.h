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

// Whether `device_node` starts with a LUKS header (LUKS1 or LUKS2 magic): a read of 6 bytes. An
// error when the device cannot be read (never taken for "no header").
StatusOr<bool> HoldsLuksHeader(const std::string& device_node);

// Whether anything uses the mapping `mapper`: a mount of its filesystem, a bind mount of its
// device node (compared by device number, not by name), or a holder in sysfs (a loop device or
// another mapping on top of it).
StatusOr<bool> MappingInUse(const BlockDevice& mapper);

// The volume's open mapping when it sits on `disk`; nullopt when none is open. A mapping of the
// volume's name on another device (left from an earlier attachment of the disk) is closed when
// `may_close` and nothing uses it; otherwise FAILED_PRECONDITION.
StatusOr<std::optional<BlockDevice>> MappingOnDisk(const BlockDevice& disk,
                                                   const std::string& serial, bool may_close,
                                                   const CommandLimits& limits);

// What the disk of an encrypted volume offers before staging.
struct EncryptedDisk {
  std::optional<BlockDevice> mapper;  // the open mapping (it was open, or opened now)
  bool blank = false;                 // no mapping: the disk is blank and is to be encrypted
  std::string reason;                 // what on the disk decided it, for the log
};

// Opens the volume's mapping if the disk holds a LUKS header (FAILED_PRECONDITION "the passphrase
// does not open this volume" when it does not take `passphrase`; a mapping already open is
// checked against the passphrase too); reports a blank disk as blank, and under a format intent
// of ours also data without any signature or a LUKS header without a single key slot (what an
// interrupted luksFormat leaves: nobody can ever have opened it). Anything else on the disk is
// refused with FAILED_PRECONDITION: an encrypted volume is never made over data. A header whose
// key derivation asks for more than kMaxKdfMemoryKib is refused before it is opened.
StatusOr<EncryptedDisk> OpenEncryptedDisk(const BlockDevice& disk, const std::string& serial,
                                          const std::string& passphrase, bool format_intent,
                                          const CommandLimits& limits);

// luksFormat of `disk` after checking once more, right before, that it is still what
// OpenEncryptedDisk called blank, then opens it. Returns the mapping.
StatusOr<BlockDevice> EncryptBlankDisk(const BlockDevice& disk, const std::string& serial,
                                       const std::string& passphrase, bool format_intent,
                                       const CommandLimits& limits);

// The device that holds the volume with `serial` as it is now: `disk` (the disk found by serial,
// or its error) for a plain volume; for an `encrypted` one the open mapping on that disk, never
// the disk itself: FAILED_PRECONDITION when none is open (the volume is reachable again once it
// is staged again). When an encrypted volume's disk is gone but its mapping is still open (the
// disk was detached under it), the mapping, so that its mounts can still be recognised and
// undone. Closes nothing.
StatusOr<BlockDevice> VolumeDeviceOf(const StatusOr<BlockDevice>& disk, const std::string& serial,
                                     bool encrypted, const CommandLimits& limits);

// True when `device` is an open mapping of this plugin (its node is under /dev/mapper).
bool IsMapping(const BlockDevice& device);

// Whether the mapping `device` still exists with its device number.
bool MappingStillPresent(const BlockDevice& device);

// Closes the volume's mapping; OK when none is open. FAILED_PRECONDITION when in use
// (MappingInUse, then the kernel's own count).
Status CloseVolumeMapping(const std::string& serial, const CommandLimits& limits);

// Closes every mapping of this plugin that no mount uses and no serial in `keep` names (start-up:
// the rows of volumes staged or being staged). Returns the names closed; one that cannot be
// closed is logged and left.
std::vector<std::string> CloseUnusedMappings(const std::vector<std::string>& keep_serials,
                                             const CommandLimits& limits);

}  // namespace oxide::node
