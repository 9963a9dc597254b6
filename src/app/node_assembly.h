// The node's parts: the CSI Node service (its rows brought in line with the mounts before it
// serves) and the removal of the startup taint once the socket serves (when the settings want it).
// Members are declared in the order they are built, so destroying the assembly tears them down in
// reverse. Made by Create and held by a unique_ptr (not copyable: its parts are not). Loop thread
// only (built before the loop runs).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/loop_services.h"
#include "app/operation_drain.h"
#include "app/startup_taint_task.h"
#include "config/settings.h"
#include "csi/node_service.h"
#include "node/instance_identity.h"
#include "rpc/csi_rpcs.h"
#include "util/status.h"

namespace oxide {

class NodeAssembly {
 public:
  // Builds the node service for `identity`'s node id, reconciles its rows with the mounts (a
  // failure stops the start; the error says why) and registers it in `handlers`. Logs the node's
  // figures. `settings` outlives the assembly.
  static StatusOr<std::unique_ptr<NodeAssembly>> Create(const Settings& settings,
                                                        const node::NodeIdentity& identity,
                                                        const LoopServices& services,
                                                        rpc::CsiHandlers& handlers);

  // Once the socket serves: the startup taint removal (never delays serving, never stops the
  // plugin).
  void Start();
  // A signal: the startup taint removal stops.
  void StopStartupTaint();
  // The shutdown, once the server takes no calls: device waits in progress end.
  void Shutdown();
  // The node engine's operations in flight ("node"), for the shutdown's drain.
  void AddDrainSources(std::vector<OperationDrain::Source>* sources);

 private:
  NodeAssembly(const Settings& settings, const std::string& node_id, int max_volumes,
               const LoopServices& services);

  csi_adapter::NodeService service_;
  // After the socket serves: the startup taint comes off once the registrar has registered the
  // driver (node/startup_taint_removal.h). Null when not wanted here.
  std::unique_ptr<StartupTaintTask> startup_taint_;
};

}  // namespace oxide
