// What staging a mount volume's device needs, decided from the device itself (the node's rows
// are only hints): already mounted, mount the filesystem it holds, format a blank device, or
// format again our own unfinished mkfs work under a format intent. The rules, and why, are in
// docs/node-safety.md. Every function blocks (mountinfo, blkid, tune2fs/xfs_db, fsck -n): call
// them from a libuv worker thread, never on the loop thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "node/command_runner.h"
#include "node/device_finder.h"
#include "node/filesystem_options.h"
#include "node/mounter.h"
#include "util/status.h"

namespace oxide::node {

struct StageInputs {
  std::string serial;  // the volume's disk: checked again right before mkfs and mount
  std::string staging_path;
  std::string fs_type;
  MountOptions options;
  // Non-empty: a format intent of ours on this volume: the UUID our interrupted mkfs wrote.
  std::string intent_uuid;
  // The size of the volume's disk as the controller published it; unset: not known (an older
  // controller), not checked.
  std::optional<uint64_t> expected_bytes;
  // An encrypted volume (node/encrypted_volume.h): the filesystem lives on the LUKS mapping of
  // the disk, opened with `passphrase` (never logged, never in a message).
  bool encrypted = false;
  std::string passphrase;
  // What mkfs is asked to apply (the volume_context's filesystem options, validated). Used only
  // by kFormat and kReformat: a filesystem already on the device is mounted as it is.
  FilesystemOptions fs_options;
};

enum class StageAction {
  kAlreadyMounted,  // the staging path holds a mount of this device: nothing to do
  kMount,           // the device holds a filesystem of the asked type: check and mount it
  kFormat,          // the device is blank: mkfs, then mount
  kReformat,        // our own mkfs was interrupted here (intent): mkfs again over its work
};

struct StagePlan {
  StageAction action = StageAction::kMount;
  std::string reason;  // what on the device decided it, for the log
  // kFormat and kReformat: the UUID mkfs writes (the intent's when there is one, else a new one);
  // recorded in the format intent before mkfs runs.
  std::string uuid;
  // Encrypted volumes: `encrypt`, the blank disk is luksFormatted and opened before mkfs; else
  // `volume_device`, the mapping the plan opened (or found open), which the filesystem is on.
  bool encrypt = false;
  std::optional<BlockDevice> volume_device;
};

// OK when `expected_bytes` is unset or is the size of `device`; FAILED_PRECONDITION otherwise (a
// device is formatted or encrypted only at the size the controller published: a reused device
// node can still report an old size).
Status CheckDiskSize(const BlockDevice& device, std::optional<uint64_t> expected_bytes);

// Decides from the mount table and the device (for an encrypted volume: from its disk's LUKS
// header, opening the mapping when there is one, and then from the mapping). Never
// kFormat/kReformat for a device holding a filesystem whose mkfs finished, a filesystem with
// another UUID than the intent's, one mounted since its mkfs, any other signature (swap, LVM, RAID,
// LUKS), a partition table, or data without our intent; never for a device whose size differs from
// `expected_bytes`. FAILED_PRECONDITION (data untouched) when the device cannot be staged as asked;
// UNAVAILABLE when blkid could not read it.
StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const StageInputs& inputs,
                                const CommandLimits& limits);

// Carries out `plan`: for an encrypted volume the LUKS format of the blank disk and its opening
// (plan.encrypt), mkfs writing plan.uuid with inputs.fs_options and, for xfs, the feature set of
// `xfs_profile` (forced over our own work for kReformat), the filesystem check, the staging
// directory and the mount. Returns the device mounted: the disk, or the encrypted volume's
// mapping.
StatusOr<BlockDevice> CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                      const StageInputs& inputs, const CommandLimits& limits,
                                      const std::string& xfs_profile = kDefaultXfsFeatureProfile);

}  // namespace oxide::node
