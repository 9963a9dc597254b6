// Start-up reconciliation of the node's volume rows with what is actually mounted
// (/proc/self/mountinfo) and present (sysfs, by NVMe serial): a row left in a transitional state
// by a crash is completed (the mount of the volume's disk exists) or rolled back (it does not); a
// staged or published row whose mount or disk is gone is marked stale, so that the CO's retry
// redoes the work; a row whose disk now has another device name or number (a reboot enumerates
// disks anew) is corrected; encrypted mappings no row names are closed. Rows are compared by
// serial, never by device name. Runs once, before the server starts, on the thread that will become
// the loop thread (nothing is served yet, so its blocking reads delay no call).
#pragma once

#include <optional>
#include <string>

#include "node/device_finder.h"
#include "node/node_os.h"
#include "store/node_volume_store.h"
#include "util/status.h"

namespace oxide::engine {

// The device a staging row recorded, if it recorded one: a hint, valid only as long as the disk
// with the row's serial still has it.
std::optional<node::BlockDevice> StagedDevice(const store::StagingRow& row);

struct ReconcileCounts {
  int kept = 0;
  int completed = 0;
  int rolled_back = 0;
  int marked_stale = 0;
  int corrected = 0;  // rows whose device name and number were re-derived from the serial
};

// Devices are found through `os` (the volume's device: an encrypted volume's open mapping, none
// when its disk is encrypted and not open). First closes the encrypted mappings no row names and
// no mount uses: nothing is reopened by itself, and nothing is left open that nothing uses.
StatusOr<ReconcileCounts> ReconcileNodeVolumes(store::NodeVolumeStore& store, node::NodeOs& os);

}  // namespace oxide::engine
