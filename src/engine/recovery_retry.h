// Putting an unfinished journal entry back in line: when Oxide cannot confirm its outcome yet
// (reconciliation of volumes and snapshots), and when a failed commit could not record it.
// Loop thread only.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "engine/journal_entry.h"
#include "loop/delayed_tasks.h"
#include "store/journal.h"
#include "util/status.h"

namespace oxide::engine {

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
