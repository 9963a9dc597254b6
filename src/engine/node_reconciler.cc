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

std::optional<node::BlockDevice> DeviceOf(const StagingRow& row) {
  node::BlockDevice device{.name = row.device_name, .node = "/dev/" + row.device_name};
  if (row.device_name.empty() ||
      std::sscanf(row.device_number.c_str(), "%u:%u", &device.major, &device.minor) != 2) {
    return std::nullopt;
  }
  return device;
}

// True when `path` holds a mount of `device`.
bool Mounted(const std::vector<node::MountEntry>& mounts,
             const std::optional<node::BlockDevice>& device, bool block, const std::string& path) {
  auto entry = node::FindMount(mounts, path);
  return entry && device && node::MountBelongsTo(*entry, *device, block, path);
}

}  // namespace

StatusOr<ReconcileCounts> ReconcileNodeVolumes(store::NodeVolumeStore& store,
                                               const std::string& sysfs_root) {
  auto mounts = node::ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  auto stagings = store.ListStagings();
  if (!stagings.ok()) return stagings.status();
  ReconcileCounts counts;
  std::map<std::string, StagingRow> staged;  // volume id → its (reconciled) staging row

  for (StagingRow row : *stagings) {
    auto device = DeviceOf(row);
    bool present = device && node::DeviceStillPresent(sysfs_root, *device);
    // A block volume is staged when its device is there; a mount volume when it is mounted.
    bool done = row.block ? present : Mounted(*mounts, device, false, row.staging_path);
    std::string before = row.state;
    Status written;
    if (row.state == store::kStaging || row.state == store::kUnstaging) {
      if (done) {  // staging finished; unstaging did not: the CO's retry unstages again
        row.state = store::kStaged;
        written = store.PutStaging(row);
        ++counts.completed;
      } else {  // nothing (left) to undo: the CO's retry stages again, or unstaging finished
        written = store.DeleteStaging(row.volume_id);
        ++counts.rolled_back;
      }
    } else if (row.state == store::kStaged && !done) {
      row.state = store::kStale;
      written = store.PutStaging(row);
      ++counts.marked_stale;
    } else {
      ++counts.kept;
    }
    if (!written.ok()) return written;
    if (before != row.state || !done) {
      log::Info("node volume reconciled",
                {{"volume_id", row.volume_id},
                 {"was", before},
                 {"now", done || row.state == store::kStale ? row.state : "removed"},
                 {"path", row.staging_path}});
    }
    if (row.state == store::kStaged) staged[row.volume_id] = row;
  }

  auto publications = store.ListPublications();
  if (!publications.ok()) return publications.status();
  for (PublicationRow row : *publications) {
    auto it = staged.find(row.volume_id);
    std::optional<node::BlockDevice> device;
    bool block = false;
    if (it != staged.end()) {
      device = DeviceOf(it->second);
      block = it->second.block;
    }
    bool done = Mounted(*mounts, device, block, row.target_path);
    std::string before = row.state;
    Status written;
    if (row.state == store::kPublishing || row.state == store::kUnpublishing) {
      if (done) {
        row.state = store::kPublished;
        written = store.PutPublication(row);
        ++counts.completed;
      } else {
        written = store.DeletePublication(row.target_path);
        ++counts.rolled_back;
      }
    } else if (row.state == store::kPublished && !done) {
      row.state = store::kStale;
      written = store.PutPublication(row);
      ++counts.marked_stale;
    } else {
      ++counts.kept;
    }
    if (!written.ok()) return written;
    if (before != row.state || !done) {
      log::Info("node publication reconciled",
                {{"volume_id", row.volume_id},
                 {"was", before},
                 {"now", done || row.state == store::kStale ? row.state : "removed"},
                 {"path", row.target_path}});
    }
  }
  return counts;
}

}  // namespace oxide::engine
