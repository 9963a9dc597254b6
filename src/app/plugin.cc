#include "app/plugin.h"

#include <uv.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>

#include "app/memory_trim.h"
#include "app/metrics_endpoint.h"
#include "app/operation_drain.h"
#include "app/provider_id_phase.h"
#include "app/sqlite_log.h"
#include "app/startup_taint_task.h"
#include "backend/curl_library.h"
#include "backend/oxide_client.h"
#include "csi/controller_service.h"
#include "csi/identity_service.h"
#include "csi/node_service.h"
#include "engine/clone_snapshot_sweep.h"
#include "engine/oxide_health.h"
#include "engine/snapshot_engine.h"
#include "engine/volume_engine.h"
#include "loop/clock.h"
#include "loop/event_loop.h"
#include "loop/turn_monitor.h"
#include "metrics/plugin_metrics.h"
#include "node/instance_identity.h"
#include "rpc/csi_server.h"
#include "rpc/library_logs.h"
#include "store/group_commit.h"
#include "store/journal_pruner.h"
#include "store/state_db.h"
#include "store/volume_store.h"
#include "util/log.h"
#include "version.h"

namespace oxide {
namespace {

// SIGTERM and SIGINT start a graceful shutdown; a second signal during it exits at once.
class SignalWatch {
 public:
  SignalWatch(EventLoop* loop, std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
    for (uv_signal_t* handle : {&term_, &interrupt_}) {
      uv_signal_init(loop->uv(), handle);
      handle->data = this;
    }
    uv_signal_start(&term_, &SignalWatch::OnSignal, SIGTERM);
    uv_signal_start(&interrupt_, &SignalWatch::OnSignal, SIGINT);
  }
  void Close() {
    for (uv_signal_t* handle : {&term_, &interrupt_}) {
      uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
    }
  }

 private:
  static void OnSignal(uv_signal_t* handle, int signum) {
    auto* self = static_cast<SignalWatch*>(handle->data);
    if (self->received_) {
      log::Warn("second signal during shutdown: exiting now", {{"signal", std::to_string(signum)}});
      std::_Exit(1);
    }
    self->received_ = true;
    log::Info("signal received: shutting down",
              {{"signal", signum == SIGTERM ? "SIGTERM" : "SIGINT"}});
    self->on_signal_();
  }

  std::function<void()> on_signal_;
  uv_signal_t term_{};
  uv_signal_t interrupt_{};
  bool received_ = false;
};

}  // namespace

int RunPlugin(const Settings& settings) {
  log::Configure(settings.log_level, settings.log_format);
  // Before any gRPC object or thread exists: libprotobuf's and gRPC's own messages become records.
  rpc::InstallLibraryLogRouting();
  if (!RouteSqliteLog()) log::Warn("SQLite was initialized before its log could be routed");
  // The Oxide token, read from OXIDE_TOKEN_FILE here, is registered with the log's redaction.
  StatusOr<backend::ClientConfig> oxide_config = backend::ClientConfig{};
  if (settings.ServesController()) oxide_config = backend::ReadClientConfig(settings);
  if (!oxide_config.ok()) {
    log::Error("cannot start: " + oxide_config.status().message());
    return 2;
  }
  metrics::RegisterPluginMetrics(kVersion, ModeName(settings.mode));
  if (settings.ServesController() && settings.oxide_insecure) {
    log::Warn("--oxide-insecure: TLS verification of the Oxide API is OFF; use this only in tests");
  }

  if (std::string error; settings.ServesController() && !backend::LoadCurl(&error)) {
    log::Error("cannot start: " + error);
    return 2;
  }
  // The node id, before anything else is built: on the main thread with no loop running yet, so
  // the Kubernetes source's blocking libcurl call (bounded by its timeouts) holds up nothing.
  std::optional<node::NodeIdentity> identity;
  if (settings.ServesNode()) {
    // Node operations (mkfs, mount, device scans) run on libuv's worker pool; 4 workers would
    // serialise a node staging many volumes at once. Set before the pool's first use (the wait
    // for spec.providerID below reads the Node on it).
    setenv("UV_THREADPOOL_SIZE", "16", 0);
    StatusOr<node::NodeIdentity> resolved = node::ResolveNodeIdentity(settings);
    if (!resolved.ok()) {
      log::Error("cannot start: " + resolved.status().message());
      return 2;
    }
    identity = *resolved;
    if (!identity->earlier_failures.empty()) {
      log::Warn("instance id sources listed before " + identity->source + " failed",
                {{"failures", identity->earlier_failures}});
    }
    // A Node the cloud controller manager has not initialised yet: no socket (so no registration
    // under a name that would change) until its spec.providerID is set.
    if (identity->awaits_provider_id) {
      StatusOr<ProviderIdOutcome> waited = AwaitProviderId(settings, &*identity);
      if (!waited.ok()) {
        log::Error("cannot start: " + waited.status().message());
        return 2;
      }
      if (*waited == ProviderIdOutcome::kStopped) {
        log::Info("oxide-csi-plugin exited cleanly");
        return 0;
      }
    }
  }
  auto state_db = store::StateDb::Open(settings.state_db);
  if (!state_db.ok()) {
    log::Error("cannot start: " + state_db.status().message());
    return 2;
  }
  store::StateDb* db = state_db->get();

  EventLoop loop;
  // The time every loop component reads and waits on; outlives them all (declared after `loop`,
  // before them).
  LoopClock clock(loop.uv());
  TurnMonitor turns(loop.uv());
  // After a burst, checked every 5 s: RSS grown by more than 4 MiB is given back.
  MemoryTrim memory_trim(loop.uv(), std::chrono::seconds(5), 4 << 20);
  // Whether the state database takes writes, for /healthz (liveness) on the metrics thread.
  metrics::WriteHealth write_health;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint;
  if (settings.serve_metrics) {
    metrics::MetricsServerOptions options;
    options.host = settings.metrics_host;
    options.port = settings.metrics_port;
    options.write_health = &write_health;
    metrics_endpoint = std::make_unique<MetricsEndpoint>(loop.uv(), std::move(options));
  }
  // The store thread owns the database's connection from here on. Its clock is the one /healthz
  // measures a running commit against.
  auto commit = std::make_unique<store::GroupCommit>(
      loop.uv(), db, [] { return static_cast<uint64_t>(metrics::SteadyMillis()); });
  commit->PublishHealthTo(&write_health);
  // Probe (readiness) asks only about the plugin itself: Oxide's health is published as metrics
  // (engine/oxide_health.h), so an Oxide outage never restarts or unreadies the plugin.
  std::vector<csi_adapter::IdentityService::HealthCheck> health = {
      [db] { return db->Health(); }, [check = commit.get()] { return check->Health(); }};
  rpc::CsiHandlers handlers;

  // The controller: Oxide client, journal, volume engine and the CSI Controller service.
  std::unique_ptr<backend::OxideClient> oxide;
  std::unique_ptr<store::VolumeStore> volumes;
  std::unique_ptr<store::JournalPruner> journal_pruner;
  std::unique_ptr<engine::VolumeEngine> volume_engine;
  std::unique_ptr<store::SnapshotStore> snapshot_rows;
  std::unique_ptr<engine::SnapshotEngine> snapshot_engine;
  std::unique_ptr<csi_adapter::ControllerService> controller;
  std::unique_ptr<engine::OxideHealth> credentials;
  std::unique_ptr<engine::CloneSnapshotSweep> clone_sweep;
  if (settings.ServesController()) {
    oxide = backend::OxideClient::Create(loop.uv(), &clock, *oxide_config);
    volumes = std::make_unique<store::VolumeStore>(db, commit.get(),
                                                   [&clock] { return clock.WallMillis(); });
    volume_engine =
        std::make_unique<engine::VolumeEngine>(&clock, oxide.get(), volumes.get(), commit.get());
    // Bounded state: finished journal entries beyond 24 h or the newest 10,000 are deleted while
    // running, and the file is compacted in idle time (store/journal_pruner.h).
    journal_pruner = std::make_unique<store::JournalPruner>(&clock, commit.get());
    volumes->journal().SetFinishListener(
        [pruner = journal_pruner.get()] { pruner->NoteFinished(); });
    snapshot_rows = std::make_unique<store::SnapshotStore>(db, commit.get());
    for (const Status* loaded : {&volumes->load_status(), &snapshot_rows->load_status()}) {
      if (!loaded->ok()) {
        log::Error("cannot start: " + loaded->message());
        return 2;
      }
    }
    snapshot_engine = std::make_unique<engine::SnapshotEngine>(
        &clock, oxide.get(), &volumes->journal(), snapshot_rows.get(), commit.get());
    controller = std::make_unique<csi_adapter::ControllerService>(
        settings, oxide.get(), volume_engine.get(), snapshot_engine.get());
    controller->Register(handlers);
    credentials =
        std::make_unique<engine::OxideHealth>(&clock, oxide.get(), settings.probe_oxide_grace);
    // Clones' temporary snapshots a replaced replica left behind (docs/replicas.md).
    clone_sweep = std::make_unique<engine::CloneSnapshotSweep>(
        &clock, oxide.get(), &volumes->journal(),
        engine::CloneSweepOptions{
            .max_age = settings.clone_snapshot_max_age,
            .period = engine::CloneSweepPeriodFor(settings.clone_snapshot_max_age)});
    if (settings.clone_snapshot_max_age <= engine::EngineOptions{}.operation_limit) {
      log::Warn(
          "--clone-snapshot-max-age is not above the operation limit: the sweep may delete the "
          "temporary snapshot of a clone another replica is still making",
          {{"max_age_ms", log::Num(static_cast<int64_t>(settings.clone_snapshot_max_age.count()))},
           {"operation_limit_ms",
            log::Num(static_cast<int64_t>(engine::EngineOptions{}.operation_limit.count()))}});
    }
  }
  csi_adapter::IdentityService identity_service(settings, std::move(health));
  identity_service.Register(handlers);

  std::unique_ptr<csi_adapter::NodeService> node;
  if (settings.ServesNode()) {
    int max_volumes = csi_adapter::NodeService::MaxVolumesPerNode(settings);
    node = std::make_unique<csi_adapter::NodeService>(settings, identity->node_id, &loop, &clock,
                                                      db, max_volumes, commit.get());
    // Before serving: rows left by a crash are completed or rolled back from the mounts.
    Status reconciled = node->Reconcile();
    if (!reconciled.ok()) {
      log::Error("cannot start: node state reconciliation failed: " + reconciled.message());
      return 2;
    }
    node->Register(handlers);
    log::Info("node service ready", {{"node_id", identity->node_id},
                                     {"instance_id_source", identity->source},
                                     {"max_volumes_per_node", std::to_string(max_volumes)},
                                     {"sysfs_root", settings.sysfs_root}});
  }

  // After the socket serves: the startup taint comes off once the registrar has registered the
  // driver (node/startup_taint_removal.h); never delays serving, never stops the plugin.
  std::unique_ptr<StartupTaintTask> startup_taint;
  if (StartupTaintTask::Wanted(settings)) {
    startup_taint = std::make_unique<StartupTaintTask>(loop.uv(), &clock, settings);
  }

  rpc::CsiServer server(&loop, std::move(handlers));
  // The last of the shutdown, once no operation is left (or the grace is over): releases the
  // loop's handles so that the loop ends.
  std::unique_ptr<OperationDrain> drain;
  std::optional<SignalWatch> signals;
  auto teardown = [&] {
    drain.reset();
    credentials.reset();
    controller.reset();
    snapshot_engine.reset();
    volume_engine.reset();
    if (volumes) volumes->journal().SetFinishListener(nullptr);
    journal_pruner.reset();
    oxide.reset();
    commit->Flush();  // its handles are idle now; it lives on for the node service
    signals->Close();
    if (metrics_endpoint) metrics_endpoint->Stop();
    memory_trim.Stop();
    turns.Stop();
    loop.Stop();
  };
  // Watch the signals before the socket exists: a CO may stop the plugin as soon as it serves.
  // One grace covers both steps: the calls in flight, then the operations in flight (they outlive
  // their calls: a replaced pod gets no next start to reconcile them, docs/replicas.md).
  signals.emplace(&loop, [&] {
    turns.SignalArrived();
    if (startup_taint) startup_taint->Stop();
    const Clock::TimePoint deadline = clock.Now() + settings.shutdown_grace;
    server.Shutdown(settings.shutdown_grace, [&, deadline] {
      if (node) node->Shutdown();
      clone_sweep.reset();  // no new work: a sweep under way is dropped
      std::vector<OperationDrain::Source> sources;
      if (volume_engine) sources.emplace_back("volume", &volume_engine->operations());
      if (snapshot_engine) sources.emplace_back("snapshot", &snapshot_engine->operations());
      if (node) sources.emplace_back("node", &node->operations());
      drain = std::make_unique<OperationDrain>(&clock, std::move(sources));
      // Called from inside an engine's callback or a timer: tear down on the next turn.
      drain->Start(deadline, [&](const std::vector<std::string>&) { loop.Post(teardown); });
    });
  });
  // Before the socket: a CO that sees the socket may expect the metrics (and a port in use stops
  // the start before the plugin serves anything).
  Status started = metrics_endpoint ? metrics_endpoint->Start() : Status::Ok();
  if (started.ok() && metrics_endpoint) {
    log::Info("serving metrics", {{"address", metrics_endpoint->MetricsUrl()}});
  }
  if (started.ok())
    started = server.Start({.socket_path = settings.socket_path,
                            .socket_mode = settings.socket_mode,
                            .pump_spin = std::chrono::microseconds(settings.rpc_spin_us)});
  if (!started.ok()) {
    if (metrics_endpoint) metrics_endpoint->Stop();
    signals->Close();
    uv_run(loop.uv(), UV_RUN_NOWAIT);  // the close callbacks, while `signals` still exists
    log::Error("cannot start: " + started.message());
    return 2;
  }
  log::Info("oxide-csi-plugin serving", {{"version", kVersion},
                                         {"mode", ModeName(settings.mode)},
                                         {"endpoint", settings.endpoint},
                                         {"driver", settings.driver_name},
                                         {"state_db", settings.state_db},
                                         {"schema_version", std::to_string(db->schema_version())}});

  if (volume_engine) {
    volume_engine->RecoverUnfinished();
    snapshot_engine->RecoverUnfinished();
    if (settings.journal_prune) journal_pruner->Start();
    credentials->Start();
    clone_sweep->Start();
  }
  if (startup_taint) startup_taint->Start();
  turns.Start();
  memory_trim.Start();
  loop.Run();
  log::Info("oxide-csi-plugin exited cleanly");
  return 0;
}

}  // namespace oxide
