// The controller's parts: the Oxide client, the journal (and its pruner), the snapshot rows, the
// volume and snapshot engines, the CSI Controller service, the Oxide health view and the clone
// snapshot sweep. Each is a member declared in the order it is built, so destroying the assembly
// tears them down in reverse (ProcessAssembly does so on the loop once the shutdown's drain is
// over). Made by Create and held by a unique_ptr (not copyable: its parts are not). Loop thread
// only (built before the loop runs).
#pragma once

#include <memory>
#include <vector>

#include "app/loop_services.h"
#include "app/shutdown.h"
#include "backend/oxide_client.h"
#include "config/settings.h"
#include "csi/controller_service.h"
#include "engine/clone_snapshot_sweep.h"
#include "engine/oxide_health.h"
#include "engine/snapshot_engine.h"
#include "engine/volume_engine.h"
#include "rpc/csi_rpcs.h"
#include "store/journal_pruner.h"
#include "store/snapshot_store.h"
#include "store/volume_store.h"
#include "util/status.h"

namespace oxide {

class ControllerAssembly {
 public:
  // Builds the parts (the Oxide client from `oxide_config`) and registers the Controller service
  // in `handlers`; rows of the journal or of the snapshots that cannot be read stop the start (the
  // error says why). `settings` outlives the assembly.
  static StatusOr<std::unique_ptr<ControllerAssembly>> Create(
      const Settings& settings, const backend::ClientConfig& oxide_config,
      const LoopServices& services, rpc::CsiHandlers& handlers);
  ~ControllerAssembly();

  // Once the socket serves: the unfinished operations are recovered and the background work (the
  // journal pruner, the Oxide health view, the clone snapshot sweep) starts.
  void Start();
  // The shutdown, once the server takes no calls: no new sweep work (one under way is dropped).
  void DropCloneSweep();
  // The engines' operations in flight ("volume", "snapshot"), for the shutdown's drain.
  void AddDrainSources(std::vector<OperationDrain::Source>* sources);

 private:
  ControllerAssembly(const Settings& settings, const backend::ClientConfig& oxide_config,
                     const LoopServices& services);
  // The parts that need the rows loaded.
  void BuildServices(const LoopServices& services);

  const Settings& settings_;
  std::unique_ptr<backend::OxideClient> oxide_;
  // The stores before everything that waits on their commits: destroying a store flushes the
  // store thread, which runs every waiter still queued, so the engines, the pruner and the
  // Controller service must be gone by then (their waiters then find them gone and do nothing).
  store::VolumeStore volumes_;
  store::SnapshotStore snapshot_rows_;
  // Bounded state: finished journal entries beyond 24 h or the newest 10,000 are deleted while
  // running, and the file is compacted in idle time (store/journal_pruner.h). The journal's
  // finish listener calls it; the destructor clears that listener first.
  store::JournalPruner journal_pruner_;
  engine::VolumeEngine volume_engine_;
  std::unique_ptr<engine::SnapshotEngine> snapshot_engine_;
  std::unique_ptr<csi_adapter::ControllerService> controller_;
  std::unique_ptr<engine::OxideHealth> oxide_health_;
  // Clones' temporary snapshots a replaced replica left behind (docs/replicas.md).
  std::unique_ptr<engine::CloneSnapshotSweep> clone_sweep_;
};

}  // namespace oxide
