// The node's operating-system work behind one interface. The node's rows are hints: every
// volume-level call here re-derives the volume's device from its NVMe serial (sysfs) and the
// mount table before it touches a device or hands a path on. HostOs does it on this machine
// (sysfs, blkid, mkfs, fsck, mount(2), statvfs, every command under a time limit); tests put a
// double in its place that can fail any call. Every method blocks: call them from libuv worker
// threads (RunBlocking), never on the loop thread. Implementations must be safe to call from
// several worker threads at once.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "node/command_runner.h"
#include "node/device_finder.h"
#include "node/mounter.h"
#include "node/stage_plan.h"
#include "node/volume_stats.h"
#include "util/status.h"

namespace oxide::node {

// The health and usage of a staged or published volume, measured on the device found by serial.
struct VolumeMeasurement {
  std::string problem;  // empty: healthy
  std::optional<FilesystemUsage> usage;
  std::optional<int64_t> block_bytes;
};

class NodeOs {
 public:
  virtual ~NodeOs() = default;

  // See FindDeviceBySerial: NOT_FOUND while the device has not appeared.
  virtual StatusOr<BlockDevice> FindDevice(const std::string& serial) = 0;
  // The device that holds the volume now: the disk found by serial, or for an `encrypted` volume
  // the open mapping on it (FAILED_PRECONDITION when none is open: never the disk).
  virtual StatusOr<BlockDevice> FindVolumeDevice(const std::string& serial, bool encrypted) = 0;
  // See PlanStaging and CarryOutStaging (node/stage_plan.h).
  virtual StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const StageInputs& inputs) = 0;
  // Returns the device now mounted at the staging path (an encrypted volume's mapping).
  virtual StatusOr<BlockDevice> CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                                const StageInputs& inputs) = 0;
  // Stages an encrypted block volume on `device`, its disk: opens the disk's LUKS mapping with
  // inputs.passphrase, first encrypting the disk when it is blank. Returns the mapping.
  virtual StatusOr<BlockDevice> OpenEncryptedBlock(const BlockDevice& device,
                                                   const StageInputs& inputs) = 0;
  // Closes the encrypted mapping of the volume with `serial` unless something uses it (a failed
  // stage leaves nothing open). OK when none is open.
  virtual Status CloseVolumeMapping(const std::string& serial) = 0;
  // Start-up: closes this plugin's encrypted mappings that no mount uses and no staging row
  // (`keep_serials`) names.
  virtual void CloseUnusedMappings(const std::vector<std::string>& keep_serials) = 0;
  // The volume devices below are the disk found by `serial`, or for an `encrypted` volume the open
  // mapping on that disk (node/encrypted_volume.h); unstaging closes the mapping.
  // A staged volume as it is now: its device by `serial`, and for a mount volume the mount of
  // that device at `staging_path`. FAILED_PRECONDITION naming what is there instead (or NOT_FOUND
  // when no device has the serial): the staging row is stale.
  virtual StatusOr<BlockDevice> VerifyStaged(const std::string& serial, bool encrypted, bool block,
                                             const std::string& staging_path) = 0;
  // Publishes after VerifyStaged: binds the device found by serial (block) or the staging mount
  // of that device (mount) onto `target`. Returns the device it bound.
  virtual StatusOr<BlockDevice> PublishVolume(const std::string& serial, bool encrypted, bool block,
                                              const std::string& staging_path,
                                              const std::string& target, bool readonly,
                                              const MountOptions& options) = 0;
  // Unmounts every mount at `path` that belongs to the volume (its device by serial, or
  // `recorded`, the device the row says was mounted there, or a device that no longer exists)
  // and removes `path`; a mount of anything else is refused with FAILED_PRECONDITION, a busy one
  // too (never detached lazily). `staging`: the volume's last use on this node is ending, so any
  // other mount of its device (a publication the rows do not know) refuses it first.
  virtual Status UnmountVolumePath(const std::string& serial, bool encrypted,
                                   const std::optional<BlockDevice>& recorded, bool block,
                                   const std::string& path, bool staging) = 0;
  // The volume at `path` measured on the device found by serial.
  virtual VolumeMeasurement MeasureVolume(const std::string& serial, bool encrypted, bool block,
                                          const std::string& path, bool expect_mount,
                                          bool expect_readonly) = 0;
};

// This machine, with sysfs read under `sysfs_root` ("/sys" in production); mkfs.xfs pinned to
// `xfs_profile` (--xfs-feature-profile, see XfsFeatureArguments).
class HostOs final : public NodeOs {
 public:
  HostOs(std::string sysfs_root, CommandLimits limits,
         std::string xfs_profile = kDefaultXfsFeatureProfile)
      : sysfs_root_(std::move(sysfs_root)), limits_(limits), xfs_profile_(std::move(xfs_profile)) {}

  StatusOr<BlockDevice> FindDevice(const std::string& serial) override;
  StatusOr<BlockDevice> FindVolumeDevice(const std::string& serial, bool encrypted) override;
  StatusOr<StagePlan> PlanStaging(const BlockDevice& device, const StageInputs& inputs) override;
  StatusOr<BlockDevice> CarryOutStaging(const BlockDevice& device, const StagePlan& plan,
                                        const StageInputs& inputs) override;
  StatusOr<BlockDevice> OpenEncryptedBlock(const BlockDevice& device,
                                           const StageInputs& inputs) override;
  void CloseUnusedMappings(const std::vector<std::string>& keep_serials) override;
  Status CloseVolumeMapping(const std::string& serial) override;
  StatusOr<BlockDevice> VerifyStaged(const std::string& serial, bool encrypted, bool block,
                                     const std::string& staging_path) override;
  StatusOr<BlockDevice> PublishVolume(const std::string& serial, bool encrypted, bool block,
                                      const std::string& staging_path, const std::string& target,
                                      bool readonly, const MountOptions& options) override;
  Status UnmountVolumePath(const std::string& serial, bool encrypted,
                           const std::optional<BlockDevice>& recorded, bool block,
                           const std::string& path, bool staging) override;
  VolumeMeasurement MeasureVolume(const std::string& serial, bool encrypted, bool block,
                                  const std::string& path, bool expect_mount,
                                  bool expect_readonly) override;

 private:
  // UNAVAILABLE unless the disk with `serial` is still `device`.
  Status StillTheDisk(const std::string& serial, const BlockDevice& device);

  const std::string sysfs_root_;
  const CommandLimits limits_;
  const std::string xfs_profile_;
};

}  // namespace oxide::node
