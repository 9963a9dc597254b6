#include "engine/recovery_close.h"

#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {

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

}  // namespace oxide::engine
