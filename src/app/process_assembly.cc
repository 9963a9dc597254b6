#include "app/process_assembly.h"

#include <uv.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "metrics/plugin_metrics.h"
#include "util/log.h"
#include "version.h"

namespace oxide {

ProcessAssembly::ProcessAssembly(const Settings& settings, store::StateDb* db)
    : settings_(settings),
      db_(db),
      clock_(loop_.uv()),
      turns_(loop_.uv()),
      // After a burst, checked every 5 s: RSS grown by more than 4 MiB is given back.
      memory_trim_(loop_.uv(), std::chrono::seconds(5), 4 << 20),
      metrics_endpoint_(settings.serve_metrics
                            ? std::make_unique<MetricsEndpoint>(
                                  loop_.uv(), MetricsOptionsFromSettings(settings, &write_health_))
                            : nullptr),
      // Its clock is the one /healthz measures a running commit against.
      commit_(loop_.uv(), db, [] { return static_cast<uint64_t>(metrics::SteadyMillis()); }) {
  commit_.PublishHealthTo(&write_health_);
}

LoopServices ProcessAssembly::Services() {
  return {.loop = &loop_, .clock = &clock_, .db = db_, .commit = &commit_};
}

Status ProcessAssembly::Build(const backend::ClientConfig& oxide_config,
                              const node::NodeIdentity* identity) {
  rpc::CsiHandlers handlers;
  if (settings_.ServesController()) {
    auto built = ControllerAssembly::Create(settings_, oxide_config, Services(), handlers);
    if (!built.ok()) return built.status();
    controller_ = std::move(*built);
  }
  // Probe (readiness) asks only about the plugin itself: Oxide's health is published as metrics
  // (engine/oxide_health.h), so an Oxide outage never restarts or unreadies the plugin.
  std::vector<csi_adapter::IdentityService::HealthCheck> health = {
      [db = db_] { return db->Health(); }, [commit = &commit_] { return commit->Health(); }};
  identity_service_ = std::make_unique<csi_adapter::IdentityService>(settings_, std::move(health));
  identity_service_->Register(handlers);
  if (settings_.ServesNode()) {
    auto built = NodeAssembly::Create(settings_, *identity, Services(), handlers);
    if (!built.ok()) return built.status();
    node_ = std::move(*built);
  }
  server_ = std::make_unique<rpc::CsiServer>(&loop_, std::move(handlers));
  return Status::Ok();
}

Status ProcessAssembly::Serve() {
  // Watch the signals before the socket exists: a CO may stop the plugin as soon as it serves.
  signals_.emplace(&loop_, [this] { OnSignal(); });
  // Before the socket: a CO that sees the socket may expect the metrics (and a port in use stops
  // the start before the plugin serves anything).
  Status started = metrics_endpoint_ ? metrics_endpoint_->Start() : Status::Ok();
  if (started.ok() && metrics_endpoint_) {
    log::Info("serving metrics", {{"address", metrics_endpoint_->MetricsUrl()}});
  }
  if (started.ok())
    started = server_->Start({.socket_path = settings_.socket_path,
                              .socket_mode = settings_.socket_mode,
                              .pump_spin = std::chrono::microseconds(settings_.rpc_spin_us)});
  if (!started.ok()) {
    if (metrics_endpoint_) metrics_endpoint_->Stop();
    signals_->Close();
    uv_run(loop_.uv(), UV_RUN_NOWAIT);  // the close callbacks, while `signals_` still exists
    return started;
  }
  log::Info("oxide-csi-plugin serving",
            {{"version", kVersion},
             {"mode", ModeName(settings_.mode)},
             {"endpoint", settings_.endpoint},
             {"driver", settings_.driver_name},
             {"state_db", settings_.state_db},
             {"schema_version", std::to_string(db_->schema_version())}});
  return Status::Ok();
}

void ProcessAssembly::Run() {
  if (controller_) controller_->Start();
  if (node_) node_->Start();
  turns_.Start();
  memory_trim_.Start();
  loop_.Run();
}

void ProcessAssembly::OnSignal() {
  turns_.SignalArrived();
  if (node_) node_->StopStartupTaint();
  // One grace covers both steps: the calls in flight, then the operations in flight (they outlive
  // their calls: a replaced pod gets no next start to reconcile them, docs/replicas.md).
  const Clock::TimePoint deadline = clock_.Now() + settings_.shutdown_grace;
  server_->Shutdown(settings_.shutdown_grace, [this, deadline] { DrainOperations(deadline); });
}

void ProcessAssembly::DrainOperations(Clock::TimePoint deadline) {
  if (node_) node_->Shutdown();
  if (controller_) controller_->DropCloneSweep();
  std::vector<OperationDrain::Source> sources;
  if (controller_) controller_->AddDrainSources(&sources);
  if (node_) node_->AddDrainSources(&sources);
  drain_ = std::make_unique<OperationDrain>(&clock_, std::move(sources));
  // Called from inside an engine's callback or a timer: tear down on the next turn.
  drain_->Start(deadline,
                [this](const std::vector<std::string>&) { loop_.Post([this] { Teardown(); }); });
}

void ProcessAssembly::Teardown() {
  drain_.reset();
  controller_.reset();  // its parts, in reverse of their construction
  commit_.Flush();      // its handles are idle now; it lives on for the node service
  signals_->Close();
  if (metrics_endpoint_) metrics_endpoint_->Stop();
  memory_trim_.Stop();
  turns_.Stop();
  loop_.Stop();
}

}  // namespace oxide
