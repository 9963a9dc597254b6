// The one way recovery closes a journal entry it has reconciled with Oxide, for the volume and the
// snapshot engines alike: the outcome is journaled and counted, and once it is durable the entry's
// key is answered and the reconciliation logged; when it cannot be recorded, the entry stays
// pending and is reconciled again later. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "engine/journal_entry.h"
#include "store/group_commit.h"
#include "store/journal.h"
#include "util/status.h"

namespace oxide::engine {

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

}  // namespace oxide::engine
