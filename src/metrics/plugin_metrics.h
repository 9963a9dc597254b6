// The plugin's metric families (names, help, labels, buckets) in the process-wide registry, and
// the one accessor every recorder uses. Any thread may record into them (they are atomics, see
// registry.h); Families() is built on first use, which the plugin makes happen on the main thread
// at start (RegisterPluginMetrics), before the loop or any worker runs.
//
// Label values come only from fixed, small sets: CSI method names, gRPC code names, Oxide
// operationIds, HTTP status codes or transport failure kinds, journal kinds and outcomes, node
// operation names and results. Never a volume, node, snapshot or instance id or name, never a
// token.
#pragma once

#include <string_view>

#include "metrics/registry.h"

namespace oxide::metrics {

// The families by area; PluginFamilies holds them all (Families().rpc_duration, ...), in the
// order they are registered and rendered.

// gRPC: one sample per answered call.
struct RpcFamilies {
  HistogramFamily& rpc_duration;  // {method, code}
  GaugeFamily& rpcs_in_flight;    // {method}
};

// Oxide API: one sample per HTTP attempt (a retried call is several attempts).
struct OxideApiFamilies {
  HistogramFamily& oxide_request_duration;  // {operation, status}
  CounterFamily& oxide_request_retries;     // {operation, reason}
  Gauge& oxide_requests_queued;             // waiting for a connection
  Counter& token_reloads;
  // The controller's view of Oxide (engine/oxide_health.h), 0 or 1. No labels; their
  // one series exists only where a controller runs (a node plugin exports none).
  GaugeFamily& oxide_api_up;
  GaugeFamily& oxide_token_valid;
  GaugeFamily& oxide_project_found;
};

// Journal and recovery.
struct JournalFamilies {
  GaugeFamily& operations_pending;  // {kind}
  // Unix time the oldest unfinished journal entry began, 0 when none; controller only (no labels).
  GaugeFamily& oldest_pending_operation_start;
  CounterFamily& recovery_entries;  // {outcome}
  Gauge& snapshots_tracked;         // snapshots polled until Oxide says ready
  // Clones' temporary snapshots left behind (a replaced pod) and deleted by the sweep.
  Counter& orphan_snapshots_deleted;
};

struct StoreFamilies {
  // The state database's group commit (recorded on the store thread).
  Histogram& commit_duration;
  Histogram& commit_batch_size;
  Counter& commit_failures;
  // Bounded state (store/journal_pruner.h): finished journal entries deleted while running, and
  // the database file's size after the last compaction (recorded on the loop / store thread).
  Counter& journal_entries_pruned;
  Gauge& state_db_bytes;
};

// The event loop.
struct LoopFamilies {
  Histogram& loop_turn_duration;
};

// Node operations (recorded on the loop thread when they finish).
struct NodeFamilies {
  HistogramFamily& node_operation_duration;  // {operation, result}
  Histogram& mkfs_duration;
};

struct PluginFamilies : RpcFamilies,
                        OxideApiFamilies,
                        JournalFamilies,
                        StoreFamilies,
                        LoopFamilies,
                        NodeFamilies {
  GaugeFamily& build_info;  // {version, mode}
};

Registry& ProcessRegistry();
PluginFamilies& Families();

// Builds the families and the process collector, and sets build_info (main thread, at start).
void RegisterPluginMetrics(std::string_view version, std::string_view mode);

}  // namespace oxide::metrics
