#include "engine/journal_entry.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/disk_naming.h"
#include "engine/volume_engine.h"
#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {

// ---- An entry's kind and arguments ----

namespace {

constexpr std::array<std::pair<OperationKind, const char*>, 6> kKinds{{
    {OperationKind::kCreate, "create"},
    {OperationKind::kDelete, "delete"},
    {OperationKind::kPublish, "publish"},
    {OperationKind::kUnpublish, "unpublish"},
    {OperationKind::kSnapshotCreate, "snapshot_create"},
    {OperationKind::kSnapshotDelete, "snapshot_delete"},
}};

// The text under `key`; "" when absent, and also when it is not text (`readable` then false).
std::string TextOf(const nlohmann::json& args, const char* key, bool* readable) {
  auto it = args.find(key);
  if (it == args.end()) return "";
  if (!it->is_string()) {
    *readable = false;
    return "";
  }
  return it->get<std::string>();
}

}  // namespace

const char* OperationKindName(OperationKind kind) {
  for (const auto& [known, name] : kKinds) {
    if (known == kind) return name;
  }
  return "";
}

bool IsSnapshotKind(std::string_view kind_name) {
  return kind_name.substr(0, 9) == "snapshot_";
}

bool JournalEntry::IsSnapshotOperation() const {
  return IsSnapshotKind(kind_name);
}

JournalEntry ReadJournalEntry(const store::OperationRow& row) {
  JournalEntry entry;
  entry.id = row.id;
  entry.kind_name = row.kind;
  entry.subject = row.subject;
  for (const auto& [known, name] : kKinds) {
    if (row.kind == name) entry.kind = known;
  }
  const nlohmann::json args = nlohmann::json::parse(row.args, nullptr, false);
  if (!args.is_object()) {
    entry.args_readable = false;
    return entry;
  }
  entry.co_name = TextOf(args, "co_name", &entry.args_readable);
  entry.node = TextOf(args, "node", &entry.args_readable);
  entry.temp_snapshot = TextOf(args, "temp_snapshot", &entry.args_readable);
  return entry;
}

std::string NodeArgs(const std::string& node) {
  return nlohmann::json{{"node", node}}.dump();
}

std::string CreateArgs(const CreateSpec& spec) {
  nlohmann::json args = {
      {"co_name", spec.co_name}, {"size", spec.size}, {"block_size", spec.block_size}};
  if (!spec.snapshot_id.empty()) args["snapshot_id"] = spec.snapshot_id;
  if (spec.disk_type != backend::kDiskTypeDistributed) args["disk_type"] = spec.disk_type;
  if (!spec.clone_source.empty()) {
    args["clone_source"] = spec.clone_source;
    args["temp_snapshot"] = CloneSnapshotNameFor(spec.co_name);
  }
  return args.dump();
}

std::string SnapshotCreateArgs(const std::string& co_name, const std::string& source_volume_id) {
  return nlohmann::json{{"co_name", co_name}, {"source_volume_id", source_volume_id}}.dump();
}

// ---- Closing an entry at recovery ----

void CloseRecoveredEntry(store::Journal& journal, store::GroupCommit& commit,
                         std::shared_ptr<bool> alive, int64_t id, const char* journal_state,
                         const std::string& note, RecoveryCloseLog log,
                         std::function<void(const Status&)> finish,
                         std::function<void()> reconcile_later) {
  journal.FinishOperation(id, journal_state, note);
  metrics::Families().recovery_entries.With({journal_state}).Increment();
  commit.WhenDurable([alive = std::move(alive), journal_state, log = std::move(log),
                      finish = std::move(finish),
                      reconcile_later = std::move(reconcile_later)](Status committed) {
    if (!*alive) return;
    if (!committed.ok()) {
      // Still pending: tried again once the database takes writes.
      log::Warn(log.not_recorded, {log.key_field,
                                   {"volume_id", log.volume_id},
                                   {"operation", log.operation},
                                   {"error", committed.message()}});
      finish(committed);
      return reconcile_later();
    }
    log::Info(log.reconciled, {log.key_field,
                               {"volume_id", log.volume_id},
                               {"operation", log.operation},
                               {"outcome", journal_state},
                               {"state", log.state}});
    finish(Status::Ok());
  });
}

void WarnIfUnreadable(const JournalEntry& entry) {
  if (entry.args_readable) return;
  log::Warn("a journal entry's arguments are unreadable; it is reconciled from Oxide alone",
            {{"operation_id", std::to_string(entry.id)}, {"operation", entry.kind_name}});
}

// ---- Putting an entry back in line ----

void RetryRecoveryLater(DelayedTasks& delayed, const JournalEntry& entry,
                        std::pair<const char*, std::string> object, const Status& error,
                        std::chrono::milliseconds delay, std::chrono::milliseconds max,
                        std::function<void(std::chrono::milliseconds next_delay)> retry) {
  log::Warn("cannot reconcile an unfinished operation yet; will retry",
            {{object.first, object.second},
             {"operation", entry.kind_name},
             {"error", error.message()},
             {"oxide_operation", error.oxide_operation()},
             {"oxide_request_id", error.oxide_request_id()},
             {"retry_in_ms", log::Num(static_cast<int64_t>(delay.count()))}});
  const auto next = std::min(delay * 2, max);
  delayed.RunAfter(delay, [retry = std::move(retry), next] { retry(next); });
}

}  // namespace oxide::engine
