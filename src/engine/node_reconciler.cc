#include "engine/node_reconciler.h"

#include <cstdio>
#include <map>

#include "engine/node_volume_state.h"
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

// What the mounts say happened to a row in `state`: nullopt when the row stands as it is. A
// transitional row is completed when `done` (the side effect happened: a stage or publish
// becomes staged or published; an interrupted unstage or unpublish leaves the volume as it was,
// and the CO's retry redoes it) and rolled back otherwise (nothing to undo). A settled row whose
// mount is gone becomes stale.
std::optional<NodeVolumeEvent> ReconcileEvent(NodeVolumeState state, bool done) {
  using S = NodeVolumeState;
  using E = NodeVolumeEvent;
  switch (state) {
    case S::kStaging:
    case S::kFormatting:
      return done ? E::kStaged : E::kStageFailed;
    case S::kUnstaging:
      return done ? E::kUnstageFailed : E::kUnstaged;
    case S::kPublishing:
      return done ? E::kPublished : E::kPublishFailed;
    case S::kUnpublishing:
      return done ? E::kUnpublishFailed : E::kUnpublished;
    case S::kStaged:
    case S::kPublished:
      return done ? std::nullopt : std::optional(E::kMountVanished);
    case S::kStale:
      return std::nullopt;
  }
  return std::nullopt;
}

// Decides one row through the node state table and writes the decision.
template <typename Row, typename Put, typename Remove>
Status Settle(Row& row, bool done, const std::string& path, Put put, Remove remove,
              ReconcileCounts& counts) {
  const std::string before = row.state;
  std::optional<NodeVolumeState> state = NodeVolumeStateFromName(row.state);
  if (!state)
    return Status(StatusCode::kDataLoss,
                  "node row at " + path + " has an unknown state \"" + row.state + "\"");
  std::optional<NodeVolumeEvent> event = ReconcileEvent(*state, done);
  if (!event) {
    ++counts.kept;
    return Status::Ok();
  }
  StatusOr<NodeRowState> next = NextNodeState(*state, *event);
  if (!next.ok()) return next.status();
  if (*next) {
    row.state = NodeVolumeStateName(**next);
    put();
    ++(*event == NodeVolumeEvent::kMountVanished ? counts.marked_stale : counts.completed);
  } else {
    remove();
    row.state = "removed";
    ++counts.rolled_back;
  }
  log::Info("node volume row reconciled with the mounts",
            {{"volume_id", row.volume_id}, {"was", before}, {"now", row.state}, {"path", path}});
  return Status::Ok();
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

StatusOr<ReconcileCounts> ReconcileNodeVolumes(store::NodeVolumeStore& store, node::NodeOs& os) {
  const std::vector<StagingRow> stagings = store.ListStagings();
  std::vector<std::string> serials;
  for (const StagingRow& row : stagings)
    serials.push_back(row.serial);
  os.CloseUnusedMappings(serials);
  auto mounts = node::ReadMountInfo();
  if (!mounts.ok()) return mounts.status();
  ReconcileCounts counts;
  std::map<std::string, StagingRow> staged;  // volume id → its (reconciled) staging row

  for (StagingRow row : stagings) {
    // The device is the one that has the volume's serial now; the row's name and number are
    // what it was when staged, and after a reboot they can belong to another disk.
    std::optional<node::BlockDevice> device;
    if (!row.serial.empty()) {
      StatusOr<node::BlockDevice> found = os.FindVolumeDevice(row.serial, row.encrypted);
      if (found.ok()) device = *found;
    }
    if (device && !row.device_name.empty() &&
        (row.device_name != device->name || row.device_number != device->Number())) {
      log::Warn(
          "the volume's disk has another device than its row remembers: the row is "
          "corrected",
          {{"volume_id", row.volume_id},
           {"serial", row.serial},
           {"was", row.device_name + " " + row.device_number},
           {"now", device->name + " " + device->Number()}});
      row.device_name = device->name;
      row.device_number = device->Number();
      store.PutStaging(row);
      ++counts.corrected;
    }
    // A block volume is staged when its disk is there; a mount volume when that disk is mounted
    // at the staging path.
    bool done = row.block ? device.has_value() : Mounted(*mounts, device, false, row.staging_path);
    if (row.state == store::kFormatting && !done) {
      // Not a staging to roll back: the intent lets the retry redo the interrupted format.
      ++counts.kept;
      log::Info("kept the intent of an interrupted format for the retry",
                {{"volume_id", row.volume_id}, {"serial", row.serial}});
      continue;
    }
    Status settled = Settle(
        row, done, row.staging_path, [&] { store.PutStaging(row); },
        [&] { store.DeleteStaging(row.volume_id); }, counts);
    if (!settled.ok()) return settled;
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
    Status settled = Settle(
        row, done, row.target_path, [&] { store.PutPublication(row); },
        [&] { store.DeletePublication(row.target_path); }, counts);
    if (!settled.ok()) return settled;
  }
  return counts;
}

}  // namespace oxide::engine
