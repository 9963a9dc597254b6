// VolumeEngine's recovery: every unfinished volume journal entry (at start, or one whose outcome a
// failed commit could not record) is reconciled with what Oxide reports of its disk, and closed
// as done or rolled back (CloseRecoveredEntry); the newest entry of a volume decides. A clone's
// temporary snapshot is deleted before its entry closes. Loop thread only.
#include <utility>
#include <vector>

#include "engine/journal_entry.h"
#include "engine/volume_engine.h"
#include "engine/volume_state.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using backend::Disk;

// The log field naming a journal entry's key: a create's entry is keyed by the disk name (the
// volume id does not exist yet), every other entry by the volume id.
std::pair<const char*, std::string> KeyField(const JournalEntry& entry) {
  return {entry.kind == OperationKind::kCreate ? "disk_name" : "volume_id", entry.subject};
}

// The journal state Oxide's report of the entry's disk settles it as.
const char* OutcomeOf(const JournalEntry& entry, const Disk& disk) {
  switch (entry.kind) {
    case OperationKind::kCreate:
      return kJournalDone;
    case OperationKind::kPublish:
      // Unreadable arguments, or none naming the node (every version since e92c543 writes it):
      // which node the operation was for is unknown, so it cannot be claimed done or undone.
      if (entry.node.empty()) return kJournalFailed;
      return IsAttachedOrAttachingTo(disk, entry.node) ? kJournalDone : kJournalRolledBack;
    case OperationKind::kUnpublish:
      if (entry.node.empty()) return kJournalFailed;
      return IsAttachedOrAttachingTo(disk, entry.node) ? kJournalRolledBack : kJournalDone;
    default:
      return kJournalRolledBack;
  }
}

// ... and the one of an entry whose disk does not exist: a create never happened, a delete did.
const char* OutcomeWithoutDisk(const JournalEntry& entry) {
  switch (entry.kind) {
    case OperationKind::kDelete:
    case OperationKind::kUnpublish:
      return kJournalDone;
    case OperationKind::kCreate:
      return kJournalRolledBack;
    default:
      return kJournalFailed;
  }
}

}  // namespace

size_t VolumeEngine::RecoverUnfinished() {
  affinity_.Check("VolumeEngine::RecoverUnfinished");
  std::vector<JournalEntry> entries;
  for (const store::OperationRow& row : journal_.UnfinishedOperations()) {
    // Snapshot operations are the SnapshotEngine's (it warns of their unreadable arguments).
    if (IsSnapshotKind(row.kind)) continue;
    JournalEntry entry = ReadJournalEntry(row);
    WarnIfUnreadable(entry);
    entries.push_back(std::move(entry));
  }
  // Newest first: when a volume has several open entries, the newest one decides.
  std::vector<int64_t> superseded;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const JournalEntry& entry = *it;
    if (tracker_.Busy(entry.subject)) {
      // An older entry for the same volume: the newer one decides.
      journal_.FinishOperation(entry.id, kJournalRolledBack, "superseded by a later operation");
      superseded.push_back(entry.id);
      continue;
    }
    tracker_.Admit(entry.subject, "recovery of " + entry.kind_name, "",
                   [](const OperationResult&) {});
    // The volume's other lock key, when this replica's row knows it (one lock per volume).
    const bool create = entry.kind == OperationKind::kCreate;
    std::optional<store::VolumeRow> row =
        create ? store_->FindByDiskName(entry.subject) : store_->FindByVolumeId(entry.subject);
    const std::string other = !row ? "" : create ? row->volume_id : row->disk_name;
    if (!other.empty() && !tracker_.Claim(entry.subject, other).ok()) {
      // A newer entry of the same volume, under its other key, decides.
      tracker_.Finish(entry.subject, Disk{});
      journal_.FinishOperation(entry.id, kJournalRolledBack, "superseded by a later operation");
      superseded.push_back(entry.id);
    }
  }
  if (!superseded.empty()) {
    // Closing them could not be recorded: still pending, each is reconciled on its own once the
    // database takes writes again (never left open until the next start).
    commit_->WhenDurable([this, alive = alive_, superseded](Status committed) {
      if (!*alive || committed.ok()) return;
      for (int64_t id : superseded)
        ReconcileLater(id);
    });
  }
  for (const JournalEntry& entry : entries) {
    if (journal_.FindUnfinishedOperation(entry.id)) Recover(entry, std::chrono::seconds(1));
  }
  if (!entries.empty()) {
    log::Info("reconciling unfinished operations with Oxide",
              {{"count", std::to_string(entries.size())}});
  }
  return entries.size();
}

void VolumeEngine::Recover(const JournalEntry& entry, std::chrono::milliseconds retry_delay) {
  std::optional<store::VolumeRow> before = entry.kind == OperationKind::kCreate
                                               ? store_->FindByDiskName(entry.subject)
                                               : store_->FindByVolumeId(entry.subject);
  oxide_->GetDisk(entry.subject, [this, alive = alive_, entry, retry_delay,
                                  before = std::move(before)](StatusOr<Disk> disk) {
    if (*alive) RecoverFromReport(entry, retry_delay, before, std::move(disk));
  });
}

void VolumeEngine::RecoverFromReport(const JournalEntry& entry,
                                     std::chrono::milliseconds retry_delay,
                                     const std::optional<store::VolumeRow>& before,
                                     StatusOr<Disk> disk) {
  if (backend::IsInAnotherProject(disk.status())) {
    // Never the project's (a delete of a foreign id that crashed before its lookup).
    return FinishRecovery(entry, kJournalRolledBack, std::nullopt);
  }
  auto retry = [this, &entry, retry_delay](const Status& why) {
    RetryRecoveryLater(delayed_, entry, KeyField(entry), why, retry_delay,
                       options_.recovery_retry_max,
                       [this, entry](auto next) { Recover(entry, next); });
  };
  if (!disk.ok() && disk.status().code() != StatusCode::kNotFound) return retry(disk.status());
  if (disk.ok() && entry.kind == OperationKind::kCreate && IsSettling(*disk)) {
    delayed_.RunAfter(retry_delay, [this, entry] { Recover(entry, std::chrono::seconds(1)); });
    return;
  }
  if (!disk.ok()) {
    if (before) store_->Remove(before->disk_name);
    return FinishRecovery(entry, OutcomeWithoutDisk(entry), std::nullopt);
  }
  const std::string& co_name = entry.co_name.empty() && before ? before->co_name : entry.co_name;
  StatusOr<store::VolumeRow> reported = RowAfterReport(*disk, co_name, StateOf(before));
  if (!reported.ok()) return retry(reported.status());
  if (before && before->disk_name != reported->disk_name) store_->Remove(before->disk_name);
  FinishRecovery(entry, OutcomeOf(entry, *disk), *reported);
}

void VolumeEngine::ReconcileLater(int64_t op_id) {
  ReconcileEntryLater(delayed_, journal_, tracker_, op_id,
                      [this](const JournalEntry& e) { Recover(e, std::chrono::seconds(1)); });
}

void VolumeEngine::FinishRecovery(const JournalEntry& entry, const char* journal_state,
                                  const std::optional<store::VolumeRow>& row) {
  // A clone interrupted at any step: its temporary snapshot goes before the entry is closed.
  if (!entry.temp_snapshot.empty()) {
    JournalEntry without = entry;
    without.temp_snapshot.clear();
    return DropTemporarySnapshot(
        entry.temp_snapshot, clock_->Now() + options_.operation_limit, options_.poll_first,
        [this, without, journal_state, row] { FinishRecovery(without, journal_state, row); });
  }
  if (row) store_->Put(*row);
  const std::string& key = entry.subject;
  std::string volume_id = row ? row->volume_id : "";
  if (volume_id == key) volume_id.clear();  // already the key field (KeyField)
  RecoveryCloseLog log{
      .not_recorded =
          "could not record the reconciliation of an unfinished operation; trying again",
      .reconciled = "reconciled an unfinished operation",
      .key_field = KeyField(entry),
      .volume_id = std::move(volume_id),
      .operation = entry.kind_name,
      .state = row ? row->state : "deleted"};
  CloseRecoveredEntry(
      journal_, *commit_, alive_, entry.id, journal_state, "reconciled with Oxide", std::move(log),
      [this, key](const Status& closed) {
        tracker_.Finish(key, closed.ok() ? OperationResult(Disk{}) : OperationResult(closed));
      },
      [this, id = entry.id] { ReconcileLater(id); });
}

}  // namespace oxide::engine
