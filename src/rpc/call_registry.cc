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

log::Level CallRegistry::LevelOf(const char* method, grpc::StatusCode code,
                                 bool operator_must_fix) {
  using C = grpc::StatusCode;
  switch (code) {
    case C::OK:
      return IsQuiet(method) ? log::Level::kDebug : log::Level::kInfo;
    // A bug, or a cause the caller cannot change: someone must look.
    case C::INTERNAL:
    case C::UNKNOWN:
    case C::DATA_LOSS:
    // Only Oxide answers these (the plugin does not authenticate its callers): the token.
    case C::UNAUTHENTICATED:
    case C::PERMISSION_DENIED:
      return log::Level::kError;
    default:
      // Retried by the CO (UNAVAILABLE, ABORTED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ...) or
      // the caller's to fix (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION,
      // OUT_OF_RANGE, ...) — unless the failure was marked as the operator's where it was made.
      return operator_must_fix ? log::Level::kError : log::Level::kWarn;
  }
}

void CallRegistry::CallEnded(const CallInfo& info, const CallRecord& record, bool delivered,
                             bool counted) {
  auto duration = std::chrono::steady_clock::now() - info.started;
  // A call cut off by the server's shutdown: its caller got gRPC's UNAVAILABLE, not our answer.
  const bool cut_off = !delivered && grpc_stopping_;
  const grpc::StatusCode code = cut_off ? grpc::StatusCode::UNAVAILABLE : record.code;
  metrics::Families()
      .rpc_duration.With({info.method, CodeName(code)})
      .Observe(std::chrono::duration<double>(duration).count());
  if (counted) {
    metrics::Families().rpcs_in_flight.With({info.method}).Add(-1);
    --in_flight_;
    ++served_;
    if (in_flight_ == 0 && on_idle_) std::exchange(on_idle_, nullptr)();
  }
  const log::Level level =
      cut_off ? log::Level::kWarn : LevelOf(info.method, code, record.operator_must_fix);
  if (!log::Enabled(level)) return;
  std::string error = record.error;
  if (cut_off) {
    error =
        "cut off by the plugin's shutdown (the grace period ended first); the caller got "
        "UNAVAILABLE and will retry";
  }
  const bool ok = code == grpc::StatusCode::OK;
  log::Write(level, ok ? "rpc ok" : "rpc failed",
             {{"method", info.method},
              {"request_id", info.request_id},
              {"code", CodeName(code)},
              {"duration_ms", log::MillisNumber(duration)},
              {"volume_id", record.volume_id},
              {"requested_volume_id", record.requested_volume_id},
              {"volume_name", record.volume_name},
              {"node_id", record.node_id},
              {"snapshot_id", record.snapshot_id},
              {"snapshot_name", record.snapshot_name},
              {"error", error},
              {"plugin_code", cut_off && record.code != code ? CodeName(record.code) : ""},
              {"oxide_operation", record.oxide_operation},
              {"oxide_request_id", record.oxide_request_id},
              {"delivered", log::Bool(delivered)}});
}

}  // namespace oxide::rpc
