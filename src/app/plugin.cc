#include "app/plugin.h"

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "app/process_assembly.h"
#include "app/provider_id_phase.h"
#include "app/sqlite_log.h"
#include "backend/curl_library.h"
#include "metrics/plugin_metrics.h"
#include "node/instance_identity.h"
#include "rpc/library_logs.h"
#include "store/state_db.h"
#include "util/log.h"
#include "version.h"

namespace oxide {
namespace {

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

}  // namespace

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
