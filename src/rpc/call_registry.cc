#include "rpc/call_registry.h"

#include <cstdio>
#include <cstring>
#include <random>
#include <utility>

#include "metrics/plugin_metrics.h"
#include "util/log.h"
#include "util/status.h"

namespace oxide::rpc {
namespace {

// RPCs that only read: logged at debug level when they succeed, so that a liveness probe every
// few seconds does not fill the log.
bool IsQuiet(const char* method) {
  static const char* const kQuiet[] = {"GetPluginInfo",
                                       "GetPluginCapabilities",
                                       "Probe",
                                       "ControllerGetCapabilities",
                                       "NodeGetCapabilities",
                                       "NodeGetInfo",
                                       "NodeGetVolumeStats",
                                       "GetCapacity",
                                       "ListVolumes",
                                       "ListSnapshots",
                                       "GetSnapshot",
                                       "ControllerGetVolume",
                                       "ValidateVolumeCapabilities"};
  for (const char* quiet : kQuiet) {
    if (std::strcmp(method, quiet) == 0) return true;
  }
  return false;
}

// gRPC's codes are the plugin's StatusCode values (util/status.h).
const char* CodeName(grpc::StatusCode code) {
  return StatusCodeName(static_cast<StatusCode>(code));
}

}  // namespace

CallRegistry::CallRegistry() : id_prefix_(std::random_device{}() & 0xffffffu) {}

std::string CallRegistry::NextRequestId() {
  char id[24];
  snprintf(id, sizeof id, "%06llx-%llu", static_cast<unsigned long long>(id_prefix_),
           static_cast<unsigned long long>(++id_counter_));
  return id;
}

void CallRegistry::StopAccepting(std::function<void()> on_idle) {
  accepting_ = false;
  on_idle_ = std::move(on_idle);
  if (in_flight_ == 0 && on_idle_) std::exchange(on_idle_, nullptr)();
}

void CallRegistry::CallStarted(const char* method) {
  ++in_flight_;
  metrics::Families().rpcs_in_flight.With({method}).Add(1);
}

void CallRegistry::CallEnded(const CallInfo& info, const grpc::Status& status,
                             const std::string& volume_id, bool delivered, bool counted) {
  auto duration = std::chrono::steady_clock::now() - info.started;
  metrics::Families()
      .rpc_duration.With({info.method, CodeName(status.error_code())})
      .Observe(std::chrono::duration<double>(duration).count());
  if (counted) {
    metrics::Families().rpcs_in_flight.With({info.method}).Add(-1);
    --in_flight_;
    ++served_;
    if (in_flight_ == 0 && on_idle_) std::exchange(on_idle_, nullptr)();
  }
  log::Level level = log::Level::kInfo;
  if (status.error_code() == grpc::StatusCode::INTERNAL ||
      status.error_code() == grpc::StatusCode::UNKNOWN) {
    level = log::Level::kError;
  } else if (status.ok() && IsQuiet(info.method)) {
    level = log::Level::kDebug;
  }
  if (!log::Enabled(level)) return;
  log::Write(level, status.ok() ? "rpc ok" : "rpc failed",
             {{"rpc", info.method},
              {"request_id", info.request_id},
              {"volume_id", volume_id},
              {"code", CodeName(status.error_code())},
              {"error", status.error_message()},
              {"duration_ms", log::Millis(duration)},
              {"delivered", delivered ? "true" : "false"}});
}

}  // namespace oxide::rpc
