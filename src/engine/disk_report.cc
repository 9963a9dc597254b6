#include "engine/disk_report.h"

#include "engine/disk_naming.h"

namespace oxide::engine {

using backend::Disk;
using backend::DiskStatus;

bool IsAttachedOrAttaching(const Disk& disk) {
  return disk.state.status == DiskStatus::kAttached || disk.state.status == DiskStatus::kAttaching;
}

bool IsAttachedOrAttachingTo(const Disk& disk, const std::string& node) {
  return IsAttachedOrAttaching(disk) && disk.state.instance == node;
}

bool IsSettling(const Disk& disk) {
  return backend::PhaseOf(disk.state.status) == backend::DiskPhase::kTransitional;
}

std::string StatusText(const Disk& disk) {
  return backend::DiskStatusName(disk.state.status);
}

std::string DiskTypeOf(const Disk& disk) {
  return disk.disk_type.empty() ? backend::kDiskTypeDistributed : disk.disk_type;
}

StatusOr<store::VolumeRow> RowAfterReport(const Disk& disk, const std::string& co_name,
                                          VolumeRowState from) {
  const bool held = IsAttachedOrAttaching(disk);
  StatusOr<VolumeRowState> next = NextState(
      from, held ? VolumeEvent::kOxideReportsAttached : VolumeEvent::kOxideReportsDetached);
  if (!next.ok()) return next.status();
  if (!next->has_value()) return Internal("the state table dropped the row of a disk Oxide has");
  store::VolumeRow row{.disk_name = disk.name,
                       .volume_id = disk.id,
                       .co_name = co_name,
                       .size = disk.size,
                       .block_size = disk.block_size,
                       .state = VolumeStateName(**next),
                       .node_id = held ? disk.state.instance : ""};
  if (row.co_name.empty()) row.co_name = CoNameFromDescription(disk.description).value_or("");
  return row;
}

StatusOr<VolumeState> RequestedState(VolumeRowState from, VolumeEvent request) {
  StatusOr<VolumeRowState> next = NextState(from, request);
  if (!next.ok()) return next.status();
  if (!next->has_value()) return Internal("the state table dropped a row on a request");
  return **next;
}

VolumeRowState StateOf(const std::optional<store::VolumeRow>& row) {
  return row ? VolumeStateFromName(row->state) : std::nullopt;
}

}  // namespace oxide::engine
