#include "engine/node_reconciler.h"

#include <cstdio>
#include <map>

#include "node/mounter.h"
#include "node/volume_ops.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using store::PublicationRow;
using store::StagingRow;

// True when `path` holds a mount of `device`.
bool Mounted(const std::vector<node::MountEntry>& mounts,
             const std::optional<node::BlockDevice>& device, bool block, const std::string& path) {
  auto entry = node::FindMount(mounts, path);
  return entry && device && node::MountBelongsTo(*entry, *device, block, path);
}

// Decides one row from whether its mount (or device) is there, and writes the decision. A
// transitional row (staging, publishing, unstaging, unpublishing) becomes `settled` when `done`
// (the side effect happened; an interrupted unstage/unpublish is redone by the CO's retry) and
// is removed otherwise (nothing to undo). A settled row whose mount is gone becomes stale.
template <typename Row, typename Put, typename Remove>
void Settle(Row& row, bool done, const char* settled, const std::string& path, Put put,
            Remove remove, ReconcileCounts& counts) {
  std::string before = row.state;
  if (row.state != settled && row.state != store::kStale) {
    if (done) {
      row.state = settled;
      put();
      ++counts.completed;
    } else {
      remove();
      row.state = "removed";
      ++counts.rolled_back;
    }
  } else if (row.state == settled && !done) {
    row.state = store::kStale;
    put();
    ++counts.marked_stale;
  } else {
    ++counts.kept;
  }
  if (before != row.state) {
    log::Info("node volume row reconciled with the mounts",
              {{"volume_id", row.volume_id}, {"was", before}, {"now", row.state}, {"path", path}});
  }
}

}  // namespace

std::optional<node::BlockDevice> StagedDevice(const StagingRow& row) {
  node::BlockDevice device{.name = row.device_name, .node = "/dev/" + row.device_name};
  if (row.device_name.empty() ||
      std::sscanf(row.device_number.c_str(), "%u:%u", &device.major, &device.minor) != 2) {
    return std::nullopt;
  }
  return device;
}

StatusOr<ReconcileCounts> ReconcileNodeVolumes(store::NodeVolumeStore& store,
                                               const std::string& sysfs_root) {
  auto mounts = node::ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  ReconcileCounts counts;
  std::map<std::string, StagingRow> staged;  // volume id → its (reconciled) staging row

  for (StagingRow row : store.ListStagings()) {
    auto device = StagedDevice(row);
    bool present = device && node::DeviceStillPresent(sysfs_root, *device);
    // A block volume is staged when its device is there; a mount volume when it is mounted.
    bool done = row.block ? present : Mounted(*mounts, device, false, row.staging_path);
    if (row.state == store::kFormatting && !done) {
      // Not a staging to roll back: the intent lets the retry redo the interrupted format.
      ++counts.kept;
      log::Info("kept the intent of an interrupted format for the retry",
                {{"volume_id", row.volume_id}, {"serial", row.serial}});
      continue;
    }
    Settle(
        row, done, store::kStaged, row.staging_path, [&] { store.PutStaging(row); },
        [&] { store.DeleteStaging(row.volume_id); }, counts);
    if (row.state == store::kStaged) staged[row.volume_id] = row;
  }

  for (PublicationRow row : store.ListPublications()) {
    auto it = staged.find(row.volume_id);
    std::optional<node::BlockDevice> device;
    bool block = false;
    if (it != staged.end()) {
      device = StagedDevice(it->second);
      block = it->second.block;
    }
    bool done = Mounted(*mounts, device, block, row.target_path);
    Settle(
        row, done, store::kPublished, row.target_path, [&] { store.PutPublication(row); },
        [&] { store.DeletePublication(row.target_path); }, counts);
  }
  return counts;
}

}  // namespace oxide::engine
