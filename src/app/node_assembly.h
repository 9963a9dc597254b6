// The node's parts in the serving plugin: the CSI Node service (its rows brought in line with the
// mounts before it serves) and the removal of the startup taint once the socket serves (when the
// settings want it), which StartupTaintTask runs on the plugin's loop. Loop thread only (built
// before the loop runs).
#pragma once

#include <uv.h>

#include <memory>
#include <string>
#include <vector>

#include "app/loop_services.h"
#include "app/node_kubernetes.h"
#include "app/shutdown.h"
#include "config/settings.h"
#include "csi/node_service.h"
#include "loop/clock.h"
#include "node/instance_identity.h"
#include "node/startup_taint_removal.h"
#include "rpc/csi_rpcs.h"
#include "util/status.h"

namespace oxide {

// Runs the node plugin's startup taint removal (node/startup_taint_removal.h) on the plugin's
// loop once the CSI socket serves: the timers run on the loop, each pass's blocking exchanges with
// the API server on libuv's worker pool, so the loop never waits for the API server. Stop() (a
// signal) cancels the timers and ends a pass in flight within about a second; the loop ends once
// that pass's completion has run. Skipped (nothing started) outside Kubernetes (no NODE_NAME or
// KUBERNETES_SERVICE_HOST) or with --remove-startup-taint=false.
class StartupTaintTask {
 public:
  // `uv`, `clock` and `settings` must outlive this object.
  StartupTaintTask(uv_loop_t* uv, Clock* clock, const Settings& settings);
  ~StartupTaintTask();
  StartupTaintTask(const StartupTaintTask&) = delete;
  StartupTaintTask& operator=(const StartupTaintTask&) = delete;

  // Whether the settings ask for the removal here (and why not, logged at debug level).
  static bool Wanted(const Settings& settings);
  void Start();
  void Stop();

 private:
  void StartPass(node::StartupTaintRemoval::StepDone done);

  const Settings& settings_;
  KubernetesCall call_;  // the pass in flight
  std::unique_ptr<node::StartupTaintRemoval> removal_;
};

// The node's parts. Members are declared in the order they are built, so destroying the assembly
// tears them down in reverse. Made by Create and held by a unique_ptr (not copyable: its parts are
// not).
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
