// The plugin process (plugin.h): RunPlugin and the ProcessAssembly it runs. In order: the steps
// before serving (the log with SQLite's routed in, the metrics families, the node's identity), the
// ProcessAssembly (built, served, run and shut down), then RunPlugin itself.
#include "app/plugin.h"

#include <sqlite3.h>
#include <uv.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/controller_assembly.h"
#include "app/loop_services.h"
#include "app/node_assembly.h"
#include "app/node_kubernetes.h"
#include "app/shutdown.h"
#include "backend/curl_library.h"
#include "csi/identity_service.h"
#include "loop/clock.h"
#include "loop/event_loop.h"
#include "loop/turn_monitor.h"
#include "metrics/metrics_server.h"
#include "metrics/plugin_metrics.h"
#include "node/instance_identity.h"
#include "rpc/csi_server.h"
#include "rpc/library_logs.h"
#include "store/group_commit.h"
#include "store/state_db.h"
#include "util/log.h"
#include "util/status.h"
#include "version.h"

namespace oxide {
namespace {

// Debug level: every report SQLite logs also comes back to the store as a return code, which the
// store turns into its own record or error with advice (e.g. "corrupt or not an SQLite database;
// it was left untouched — restore it from a backup"), so at the default level a failure keeps
// its one line; --log-level=debug shows SQLite's own detail (the page, the statement) beside it.
void SqliteLog(void* /*unused*/, int code, const char* message) {
  if (!log::Enabled(log::Level::kDebug)) return;
  log::Write(log::Level::kDebug, message != nullptr ? message : "",
             {{"source", "sqlite"}, {"sqlite_code", log::Num(code)}});
}

// The plugin's log, with gRPC's and SQLite's messages routed into it.
void ConfigureLogging(const Settings& settings) {
  log::Configure(settings.log_level, settings.log_format);
  // Before any gRPC object or thread exists: libprotobuf's and gRPC's own messages become records.
  rpc::InstallLibraryLogRouting();
  if (!RouteSqliteLog()) log::Warn("SQLite was initialized before its log could be routed");
}

// The plugin's metrics families, and a warning when TLS to the Oxide API is off.
void RegisterMetricsAndWarn(const Settings& settings) {
  metrics::RegisterPluginMetrics(kVersion, ModeName(settings.mode));
  if (settings.ServesController() && settings.oxide_insecure) {
    log::Warn("--oxide-insecure: TLS verification of the Oxide API is OFF; use this only in tests");
  }
}

// The node id, before anything else is built: on the main thread with no loop running yet, so the
// Kubernetes source's blocking libcurl call (bounded by its timeouts) holds up nothing. kStopped:
// a signal came during the wait for spec.providerID.
StatusOr<ProviderIdOutcome> IdentifyNode(const Settings& settings, node::NodeIdentity* identity) {
  // Node operations (mkfs, mount, device scans) run on libuv's worker pool; 4 workers would
  // serialise a node staging many volumes at once. Set before the pool's first use (the wait for
  // spec.providerID below reads the Node on it).
  setenv("UV_THREADPOOL_SIZE", "16", 0);
  StatusOr<node::NodeIdentity> resolved = node::ResolveNodeIdentity(settings);
  if (!resolved.ok()) return resolved.status();
  *identity = *resolved;
  if (!identity->earlier_failures.empty()) {
    log::Warn("instance id sources listed before " + identity->source + " failed",
              {{"failures", identity->earlier_failures}});
  }
  // A Node the cloud controller manager has not initialised yet: no socket (so no registration
  // under a name that would change) until its spec.providerID is set.
  if (!identity->awaits_provider_id) return ProviderIdOutcome::kIdentified;
  return AwaitProviderId(settings, identity);
}

int CannotStart(const std::string& why) {
  log::Error("cannot start: " + why);
  return 2;
}

// The serving plugin: the parts both modes share (the loop, its clock, the turn monitor, memory
// trimming, the metrics endpoint, the store thread, the Identity service, the CSI server, the
// signal watch, the shutdown's drain) and the controller and node assemblies the settings ask for.
// Members are declared in the order they are built, so they are destroyed in reverse; the one
// thing done by hand is Teardown(): the controller and the loop's handles go on the loop, once the
// drain is over, so that the loop ends. Build, Serve and Run on the main thread, which becomes the
// loop thread.
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

}  // namespace

bool RouteSqliteLog() {
  return sqlite3_config(SQLITE_CONFIG_LOG, &SqliteLog, nullptr) == SQLITE_OK;
}

int RunPlugin(const Settings& settings, const backend::ClientConfig& oxide_config) {
  ConfigureLogging(settings);
  RegisterMetricsAndWarn(settings);
  if (std::string error; settings.ServesController() && !backend::LoadCurl(&error)) {
    return CannotStart(error);
  }
  std::optional<node::NodeIdentity> identity;
  if (settings.ServesNode()) {
    StatusOr<ProviderIdOutcome> identified = IdentifyNode(settings, &identity.emplace());
    if (!identified.ok()) return CannotStart(identified.status().message());
    if (*identified == ProviderIdOutcome::kStopped) {
      log::Info("oxide-csi-plugin exited cleanly");
      return 0;
    }
  }
  auto state_db = store::StateDb::Open(settings.state_db);
  if (!state_db.ok()) return CannotStart(state_db.status().message());

  ProcessAssembly process(settings, state_db->get());
  if (Status built = process.Build(oxide_config, identity ? &*identity : nullptr); !built.ok()) {
    return CannotStart(built.message());
  }
  if (Status serving = process.Serve(); !serving.ok()) return CannotStart(serving.message());
  process.Run();
  log::Info("oxide-csi-plugin exited cleanly");
  return 0;
}

}  // namespace oxide
