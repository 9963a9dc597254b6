// The serving plugin: the parts both modes share (the loop, its clock, the turn monitor, memory
// trimming, the metrics endpoint, the store thread, the Identity service, the CSI server, the
// signal watch, the shutdown's drain) and the controller and node assemblies the settings ask for.
// Members are declared in the order they are built, so they are destroyed in reverse; the one
// thing done by hand is Teardown(): the controller and the loop's handles go on the loop, once the
// drain is over, so that the loop ends. Build, Serve and Run on the main thread, which becomes the
// loop thread.
#pragma once

#include <memory>
#include <optional>

#include "app/controller_assembly.h"
#include "app/loop_services.h"
#include "app/memory_trim.h"
#include "app/metrics_endpoint.h"
#include "app/node_assembly.h"
#include "app/operation_drain.h"
#include "app/signal_watch.h"
#include "backend/oxide_client.h"
#include "config/settings.h"
#include "csi/identity_service.h"
#include "loop/clock.h"
#include "loop/event_loop.h"
#include "loop/turn_monitor.h"
#include "metrics/metrics_server.h"
#include "node/instance_identity.h"
#include "rpc/csi_server.h"
#include "store/group_commit.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide {

class ProcessAssembly {
 public:
  // The loop and the store thread (which owns `db`'s connection from here on). `settings` and
  // `db` outlive the assembly.
  ProcessAssembly(const Settings& settings, store::StateDb* db);
  ProcessAssembly(const ProcessAssembly&) = delete;
  ProcessAssembly& operator=(const ProcessAssembly&) = delete;

  // The controller (when served, its Oxide client from `oxide_config`), the Identity service, the
  // node (when served, for `identity`) and the server; an error stops the start.
  Status Build(const backend::ClientConfig& oxide_config, const node::NodeIdentity* identity);
  // Watches the signals, then serves the metrics and the socket; an error (a port or socket in
  // use) stops the start. Logs "oxide-csi-plugin serving".
  Status Serve();
  // The work that waits for serving (recovery, the startup taint), then the loop until the
  // shutdown a signal starts is over.
  void Run();

 private:
  LoopServices Services();
  // Signal → the server stops taking calls (within the grace) → DrainOperations.
  void OnSignal();
  // Waits for the operations in flight until `deadline`, then Teardown on the next turn.
  void DrainOperations(Clock::TimePoint deadline);
  void Teardown();

  const Settings& settings_;
  store::StateDb* db_;
  EventLoop loop_;
  // The time every loop component reads and waits on; outlives them all.
  LoopClock clock_;
  TurnMonitor turns_;
  MemoryTrim memory_trim_;
  // Whether the state database takes writes, for /healthz (liveness) on the metrics thread.
  metrics::WriteHealth write_health_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;  // null without --metrics
  store::GroupCommit commit_;
  std::unique_ptr<ControllerAssembly> controller_;
  std::unique_ptr<csi_adapter::IdentityService> identity_service_;
  std::unique_ptr<NodeAssembly> node_;
  std::unique_ptr<rpc::CsiServer> server_;
  // The last of the shutdown, once no operation is left (or the grace is over).
  std::unique_ptr<OperationDrain> drain_;
  std::optional<SignalWatch> signals_;
};

}  // namespace oxide
