#include "metrics/plugin_metrics.h"

#include "metrics/process_metrics.h"

namespace oxide::metrics {
namespace {

// Seconds, 1 ms to 60 s: an RPC, an Oxide request, a node operation.
const Buckets kLatencyBuckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                 0.5,   1,      2.5,   5,    10,    30,   60};
// Seconds, 50 µs to 50 ms: as the turn monitor's own histogram.
const Buckets kTurnBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05};
// Seconds, 100 µs to 5 s: an fsync'ed SQLite transaction.
const Buckets kCommitBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                0.025,  0.05,    0.1,    0.25,  0.5,    1,     5};
const Buckets kBatchBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
// Seconds, 100 ms to 10 min: mkfs of a small to a very large disk.
const Buckets kMkfsBuckets = {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600};

RpcFamilies BuildRpc(Registry& r) {
  return RpcFamilies{
      .rpc_duration = r.AddHistogram("oxide_csi_rpc_duration_seconds",
                                     "Time from a CSI call's arrival to its answer.",
                                     {"method", "code"}, kLatencyBuckets),
      .rpcs_in_flight = r.AddGauge("oxide_csi_rpcs_in_flight",
                                   "CSI calls being served, not yet answered.", {"method"}),
  };
}

OxideApiFamilies BuildOxideApi(Registry& r) {
  return OxideApiFamilies{
      .oxide_request_duration = r.AddHistogram(
          "oxide_csi_oxide_request_duration_seconds",
          "Time of one HTTP attempt to the Oxide API, from the start of the transfer to its end; "
          "status is the HTTP status or the transport failure (timeout, connect, tls, error).",
          {"operation", "status"}, kLatencyBuckets),
      .oxide_request_retries =
          r.AddCounter("oxide_csi_oxide_request_retries_total",
                       "Oxide API requests repeated after a failure, by the failure's kind.",
                       {"operation", "reason"}),
      .oxide_requests_queued =
          r.AddGauge("oxide_csi_oxide_requests_queued",
                     "Oxide API requests waiting for a connection (beyond the in-flight cap).")
              .With({}),
      .token_reloads = r.AddCounter("oxide_csi_token_reloads_total",
                                    "Times a changed Oxide API token was read from the token file.")
                           .With({}),
      .oxide_api_up = r.AddGauge(
          "oxide_csi_oxide_api_up",
          "1 while the Oxide API answers; 0 once it has not answered (connection errors, 5xx) "
          "for --probe-oxide-grace. Controller only."),
      .oxide_token_valid = r.AddGauge(
          "oxide_csi_oxide_token_valid",
          "1 while Oxide accepts the API token; 0 once it refuses it (401/403 to GET /v1/me), "
          "and while the API does not answer (oxide_csi_oxide_api_up 0). Controller only."),
      .oxide_project_found = r.AddGauge(
          "oxide_csi_oxide_project_found",
          "1 unless Oxide says the configured project does not exist for the token's user. "
          "Controller only."),
  };
}

JournalFamilies BuildJournal(Registry& r) {
  return JournalFamilies{
      .operations_pending = r.AddGauge(
          "oxide_csi_operations_pending",
          "Journal entries of controller operations that have started and not finished.", {"kind"}),
      .oldest_pending_operation_start = r.AddGauge(
          "oxide_csi_oldest_pending_operation_start_time_seconds",
          "Unix time the oldest controller operation that has started and not finished began "
          "(its journal entry); 0 when none is pending."),
      .recovery_entries = r.AddCounter(
          "oxide_csi_recovery_entries_total",
          "Unfinished journal entries settled by recovery after a restart, by outcome.",
          {"outcome"}),
      .snapshots_tracked =
          r.AddGauge("oxide_csi_snapshots_tracked",
                     "Snapshots the controller polls until Oxide reports them ready.")
              .With({}),
      .orphan_snapshots_deleted =
          r.AddCounter("oxide_csi_orphan_snapshots_deleted_total",
                       "Temporary clone snapshots (csi-clone-*) no operation used any more, "
                       "deleted by the controller's sweep.")
              .With({}),
  };
}

StoreFamilies BuildStore(Registry& r) {
  return StoreFamilies{
      .commit_duration =
          r.AddHistogram("oxide_csi_store_commit_duration_seconds",
                         "Time of one state-database transaction (group commit), fsync included.",
                         {}, kCommitBuckets)
              .With({}),
      .commit_batch_size =
          r.AddHistogram("oxide_csi_store_commit_batch_size",
                         "Writes carried by one state-database transaction.", {}, kBatchBuckets)
              .With({}),
      .commit_failures = r.AddCounter("oxide_csi_store_commit_failures_total",
                                      "State-database transactions that failed (writes undone).")
                             .With({}),
      .journal_entries_pruned =
          r.AddCounter("oxide_csi_journal_entries_pruned_total",
                       "Finished operation-journal entries deleted by the running pruner.")
              .With({}),
      .state_db_bytes = r.AddGauge("oxide_csi_state_db_bytes",
                                   "Size of the state database file after the last compaction "
                                   "(pages in use and free; the WAL not counted).")
                            .With({}),
  };
}

LoopFamilies BuildLoop(Registry& r) {
  return LoopFamilies{
      .loop_turn_duration =
          r.AddHistogram("oxide_csi_loop_turn_duration_seconds",
                         "Time one event-loop turn kept the loop thread busy.", {}, kTurnBuckets)
              .With({}),
  };
}

NodeFamilies BuildNode(Registry& r) {
  return NodeFamilies{
      .node_operation_duration = r.AddHistogram(
          "oxide_csi_node_operation_duration_seconds",
          "Time of a node operation (stage, unstage, publish, unpublish, expand) by result.",
          {"operation", "result"}, kLatencyBuckets),
      .mkfs_duration = r.AddHistogram("oxide_csi_node_mkfs_duration_seconds",
                                      "Time mkfs took to format a blank volume.", {}, kMkfsBuckets)
                           .With({}),
  };
}

// The families in the order they are registered, and so rendered (a braced list runs left to
// right).
PluginFamilies Build(Registry& r) {
  return PluginFamilies{
      BuildRpc(r),
      BuildOxideApi(r),
      BuildJournal(r),
      BuildStore(r),
      BuildLoop(r),
      BuildNode(r),
      r.AddGauge("oxide_csi_build_info", "Always 1; the plugin's version and mode as labels.",
                 {"version", "mode"}, 4),
  };
}

}  // namespace

Registry& ProcessRegistry() {
  static Registry registry;
  return registry;
}

PluginFamilies& Families() {
  static PluginFamilies families = Build(ProcessRegistry());
  return families;
}

void RegisterPluginMetrics(std::string_view version, std::string_view mode) {
  static bool registered = false;
  if (registered) return;
  registered = true;
  Families().build_info.With({version, mode}).Set(1);
  ProcessRegistry().AddCollector(&AppendProcessMetrics);
}

}  // namespace oxide::metrics
