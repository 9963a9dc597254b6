// What the node volume engine reads of its own rows: their state and whether a row names a given
// device. Loop thread (NodeVolumeEngine's steps).
#pragma once

#include <optional>
#include <string>

#include "engine/node_volume_state.h"
#include "node/stage_plan.h"
#include "store/node_volume_store.h"

namespace oxide::engine {

inline NodeRowState RowStateOf(const std::string& name) {
  return name.empty() ? std::nullopt : NodeVolumeStateFromName(name);
}

inline bool HasState(const std::optional<store::StagingRow>& row, NodeVolumeState state) {
  return row && RowStateOf(row->state) == state;
}

inline bool SameDevice(const store::StagingRow& row, const node::BlockDevice& device) {
  return row.device_name == device.name && row.device_number == device.Number();
}

}  // namespace oxide::engine
