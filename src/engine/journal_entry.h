// An operation journal entry as the engines see it, from the request to its close at recovery:
//  - reading and writing an entry's arguments (the one place that does): its kind and its JSON
//    arguments become a typed JournalEntry (recovery of volumes and snapshots, the clone sweep),
//    and the engines journal each operation's arguments through the writers below;
//  - how an outcome is written: which errors leave a POST's outcome unknown, the journal states,
//    and the answer when an outcome could not be recorded;
//  - how recovery closes an entry it has reconciled with Oxide, for the volume and the snapshot
//    engines alike: the outcome is journaled and counted, and once it is durable the entry's key
//    is answered and the reconciliation logged; when it cannot be recorded, the entry stays
//    pending and is reconciled again later;
//  - putting an unfinished entry back in line: when Oxide cannot confirm its outcome yet, and when
//    a failed commit could not record it.
// Threads: the readers, writers and outcome rules are pure (any thread); CloseRecoveredEntry,
// RetryRecoveryLater and ReconcileEntryLater are for the loop thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "loop/delayed_tasks.h"
#include "store/group_commit.h"
#include "store/journal.h"
#include "util/status.h"

namespace oxide::engine {

// ---- An entry's kind and arguments (pure) ----

struct CreateSpec;

enum class OperationKind {
  kCreate,
  kDelete,
  kPublish,
  kUnpublish,
  kSnapshotCreate,
  kSnapshotDelete,
  kUnknown,  // a kind this version does not know
};

// The name an entry of `kind` is journaled under (kUnknown: "").
const char* OperationKindName(OperationKind kind);

struct JournalEntry {
  int64_t id = 0;
  OperationKind kind = OperationKind::kUnknown;
  std::string kind_name;  // as journaled (logs name the operation by it)
  std::string subject;    // the journal's subject (store::OperationRow::subject)
  // From the arguments; empty when the entry has none.
  std::string co_name;        // create, snapshot_create: the CO's name
  std::string node;           // publish, unpublish: the instance
  std::string temp_snapshot;  // a clone's create: its temporary snapshot
  // False when the arguments are not a JSON object or a field above is not text (a damaged
  // entry): its fields read as empty, and recovery must not claim an outcome it cannot see.
  bool args_readable = true;

  // The SnapshotEngine's (every kind named snapshot_*, also one this version does not know).
  bool IsSnapshotOperation() const;
};

// Whether a journal kind is the SnapshotEngine's (see IsSnapshotOperation); read off the row,
// before its arguments are parsed.
bool IsSnapshotKind(std::string_view kind_name);

// Arguments that are not a JSON object read as none.
JournalEntry ReadJournalEntry(const store::OperationRow& row);

// The journal arguments of a publish or an unpublish (read back as JournalEntry::node).
std::string NodeArgs(const std::string& node);
// ... of a volume create (read back as co_name and, for a clone, temp_snapshot).
std::string CreateArgs(const CreateSpec& spec);
// ... of a snapshot create (read back as co_name).
std::string SnapshotCreateArgs(const std::string& co_name, const std::string& source_volume_id);

// ---- How an outcome is written (pure) ----

inline constexpr const char* kJournalDone = "done";
inline constexpr const char* kJournalFailed = "failed";
inline constexpr const char* kJournalRolledBack = "rolled_back";

// A POST whose outcome is unknown: Oxide may or may not have acted on it.
inline bool OutcomeUnknown(const Status& status) {
  return status.code() == StatusCode::kUnavailable ||
         status.code() == StatusCode::kDeadlineExceeded || status.code() == StatusCode::kUnknown ||
         status.code() == StatusCode::kInternal;
}

// The answer to a call whose intent was journaled and sent to Oxide but whose outcome could not
// be recorded (`committed`: why): the entry stays pending and the engine reconciles `subject`
// (e.g. "volume <id>") with Oxide once the state database takes writes again.
inline Status OutcomeNotRecorded(const std::string& subject, const Status& committed) {
  return Unavailable(
      "the intent of this call was recorded and sent to Oxide, but its outcome could not be "
      "recorded (" +
      committed.message() + "); the plugin reconciles " + subject +
      " with Oxide once the state database takes writes again; retry the call");
}

inline std::string JournalOutcome(const Status& status) {
  return status.ok() ? "OK" : std::string(StatusCodeName(status.code())) + ": " + status.message();
}

// ---- Closing an entry at recovery (loop thread) ----

// What the two log records of a close say. Fields left empty are not logged.
struct RecoveryCloseLog {
  const char* not_recorded;  // warning: the close could not be recorded
  const char* reconciled;    // info: the close is durable
  std::pair<const char*, std::string> key_field;
  std::string volume_id;
  std::string operation;
  std::string state;  // the subject's state after the close (info only)
};

// Closes entry `id` as `journal_state` with `note`, counts it in recovery_entries and, once that
// is durable (and `alive`), logs `log.reconciled` and calls finish(OK); when it cannot be
// recorded, logs `log.not_recorded`, calls finish(the error) and reconcile_later().
void CloseRecoveredEntry(store::Journal& journal, store::GroupCommit& commit,
                         std::shared_ptr<bool> alive, int64_t id, const char* journal_state,
                         const std::string& note, RecoveryCloseLog log,
                         std::function<void(const Status&)> finish,
                         std::function<void()> reconcile_later);

// Logs a warning for a damaged entry (arguments no version of the plugin writes): it is then
// reconciled from Oxide's report alone, and closed as failed where its arguments would decide.
void WarnIfUnreadable(const JournalEntry& entry);

// ---- Putting an entry back in line (loop thread) ----

// A warning, then a retry after `delay`, the next one after twice that up to `max`. `object`
// names what the entry is about, e.g. {"volume_id", "<uuid>"}.
void RetryRecoveryLater(DelayedTasks& delayed, const JournalEntry& entry,
                        std::pair<const char*, std::string> object, const Status& error,
                        std::chrono::milliseconds delay, std::chrono::milliseconds max,
                        std::function<void(std::chrono::milliseconds next_delay)> retry);

// Re-runs `recover` for journal entry `op_id` a second from now if the entry is still pending
// then (its outcome could not be recorded); while a call holds the entry's key, a second later
// again. The entry's key is admitted in `tracker` for the recovery, which must Finish it.
template <typename Tracker>
void ReconcileEntryLater(DelayedTasks& delayed, const store::Journal& journal, Tracker& tracker,
                         int64_t op_id, std::function<void(const JournalEntry&)> recover) {
  delayed.RunAfter(std::chrono::seconds(1), [&delayed, &journal, &tracker, op_id,
                                             recover = std::move(recover)]() mutable {
    std::optional<store::OperationRow> row = journal.FindUnfinishedOperation(op_id);
    if (!row) return;
    const JournalEntry entry = ReadJournalEntry(*row);
    if (tracker.Busy(entry.subject)) {
      return ReconcileEntryLater(delayed, journal, tracker, op_id, std::move(recover));
    }
    tracker.Admit(entry.subject, "recovery of " + entry.kind_name, "", [](const auto&) {});
    recover(entry);
  });
}

}  // namespace oxide::engine
