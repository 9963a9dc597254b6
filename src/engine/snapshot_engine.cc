#include "engine/snapshot_engine.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "engine/disk_naming.h"
#include "engine/journal_entry.h"
#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using backend::Snapshot;
using nlohmann::json;

std::string Quoted(const std::string& text) {
  return json(text).dump();
}

}  // namespace

Snapshot SnapshotFromRow(const store::SnapshotRow& row) {
  Snapshot snapshot;
  snapshot.id = row.snapshot_id;
  snapshot.name = row.snapshot_name;
  snapshot.disk_id = row.source_volume_id;
  snapshot.size = row.size;
  snapshot.state = backend::ParseSnapshotStatus(row.state);
  snapshot.time_created = row.time_created;
  return snapshot;
}

store::SnapshotRow RowFromSnapshot(const Snapshot& snapshot, const std::string& co_name) {
  return {.snapshot_name = snapshot.name,
          .snapshot_id = snapshot.id,
          .co_name = co_name,
          .source_volume_id = snapshot.disk_id,
          .size = snapshot.size,
          .state = backend::SnapshotStatusName(snapshot.state),
          .time_created = snapshot.time_created,
          .polls = 0};
}

struct SnapshotEngine::Job {
  SnapshotSpec spec;
  int64_t op_id = 0;
  // The id the local row recorded for a snapshot Oxide no longer has, when this create makes a
  // new one under the same name (logged with the new id once Oxide has it).
  std::string vanished_snapshot_id;
};

// One CreateSnapshot call's answer: given once, by whichever comes first.
struct SnapshotEngine::Answer {
  SnapshotSpec spec;
  Clock::TimePoint answer_by;
  SnapshotWaiter done;
  std::optional<Snapshot> accepted;  // Oxide has the snapshot (still creating)
  bool answered = false;

  void Give(const SnapshotResult& result) {
    if (answered) return;
    answered = true;
    SnapshotWaiter waiter = std::move(done);
    waiter(result);
  }
};

SnapshotEngine::SnapshotEngine(Clock* clock, backend::OxideClient* oxide, store::Journal* journal,
                               store::SnapshotStore* snapshots, store::GroupCommit* commit,
                               SnapshotEngineOptions options)
    : clock_(clock),
      oxide_(oxide),
      journal_(journal),
      snapshots_(snapshots),
      commit_(commit),
      options_(options),
      uploads_(clock, oxide, snapshots, options.uploads),
      delayed_(clock) {}

SnapshotEngine::~SnapshotEngine() {
  *alive_ = false;
}

// ---- CreateSnapshot -------------------------------------------------------------------------

void SnapshotEngine::Create(const SnapshotSpec& spec, Clock::TimePoint answer_by,
                            SnapshotWaiter done) {
  affinity_.Check("SnapshotEngine::Create");
  auto answer = std::make_shared<Answer>();
  answer->spec = spec;
  answer->answer_by = answer_by;
  answer->done = std::move(done);
  auto admitted = tracker_.Admit(spec.snapshot_name, "CreateSnapshot", spec.source_volume_id,
                                 [this, alive = alive_, answer](const SnapshotResult& accepted) {
                                   if (*alive) AnswerAccepted(answer, accepted);
                                 });
  if (admitted == BasicOperationTracker<SnapshotResult>::Admission::kRejected) return;
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(answer_by - clock_->Now());
  delayed_.RunAfter(std::max(wait, std::chrono::milliseconds(0)), [this, answer] {
    if (answer->answered) return;
    if (answer->accepted) return answer->Give(*answer->accepted);
    AnswerWhenVisible(answer);
  });
  if (admitted == BasicOperationTracker<SnapshotResult>::Admission::kStart) StartCreate(spec);
}

void SnapshotEngine::AnswerAccepted(const AnswerPtr& answer, const SnapshotResult& accepted) {
  if (answer->answered) return;
  if (!accepted.ok() || accepted->state != backend::SnapshotStatus::kCreating ||
      clock_->Now() >= answer->answer_by) {
    return answer->Give(accepted);
  }
  answer->accepted = *accepted;
  bool tracked = uploads_.WhenSettled(accepted->id, [answer](const SnapshotResult& settled) {
    if (settled.ok()) return answer->Give(settled);
    answer->Give(Unavailable("snapshot " + answer->spec.snapshot_name +
                             " disappeared while Oxide was creating it: " +
                             settled.status().message() + "; retry to take it again"));
  });
  if (!tracked) answer->Give(accepted);
}

// The answer is due but the create has not come back yet: answer as soon as Oxide shows the
// snapshot (real Oxide answers the POST only when the snapshot is ready).
void SnapshotEngine::AnswerWhenVisible(const AnswerPtr& answer) {
  oxide_->GetSnapshot(
      answer->spec.snapshot_name, [this, alive = alive_, answer](StatusOr<Snapshot> found) {
        if (!*alive || answer->answered) return;
        if (found.ok()) {
          Status matches = Matches(answer->spec, *found);
          return answer->Give(matches.ok() ? SnapshotResult(*found) : SnapshotResult(matches));
        }
        delayed_.RunAfter(options_.lookup_retry, [this, answer] {
          if (!answer->answered) AnswerWhenVisible(answer);
        });
      });
}

Status SnapshotEngine::Matches(const SnapshotSpec& spec, const Snapshot& snapshot) const {
  std::optional<std::string> owner = CoNameFromSnapshotDescription(snapshot.description);
  if (owner && *owner != spec.co_name) {
    return AlreadyExists("Oxide snapshot " + snapshot.name + " belongs to CSI snapshot " +
                         Quoted(*owner) + ", not " + Quoted(spec.co_name));
  }
  if (!owner) {
    return AlreadyExists("Oxide snapshot " + snapshot.name +
                         " already exists and was not made by this plugin");
  }
  if (snapshot.disk_id != spec.source_volume_id) {
    return AlreadyExists("CSI snapshot " + Quoted(spec.co_name) + " already exists for volume " +
                         snapshot.disk_id + ", not for volume " + spec.source_volume_id);
  }
  return Status::Ok();
}

void SnapshotEngine::StartCreate(const SnapshotSpec& spec) {
  const std::string& key = spec.snapshot_name;
  std::optional<store::SnapshotRow> row = snapshots_->FindByName(key);
  if (row && row->source_volume_id != spec.source_volume_id) {
    return tracker_.Finish(
        key, AlreadyExists("CSI snapshot " + Quoted(spec.co_name) + " already exists for volume " +
                           row->source_volume_id + ", not for volume " + spec.source_volume_id));
  }
  if (row && !row->snapshot_id.empty() && uploads_.IsTracking(row->snapshot_id)) {
    tracker_.Alias(key, row->snapshot_id);
    return tracker_.Finish(key, SnapshotFromRow(*row));  // the upload tracker follows it
  }
  auto job = std::make_shared<Job>();
  job->spec = spec;
  job->op_id = journal_->BeginOperation(OperationKindName(OperationKind::kSnapshotCreate), key,
                                        SnapshotCreateArgs(spec.co_name, spec.source_volume_id));
  if (!row) {
    snapshots_->Put({.snapshot_name = key,
                     .snapshot_id = "",
                     .co_name = spec.co_name,
                     .source_volume_id = spec.source_volume_id,
                     .size = 0,
                     .state = backend::SnapshotStatusName(backend::SnapshotStatus::kCreating),
                     .time_created = "",
                     .polls = 0});
  }
  bool known = row && !row->snapshot_id.empty();
  if (known) job->vanished_snapshot_id = row->snapshot_id;  // cleared if Oxide still has it
  commit_->WhenDurable([this, alive = alive_, job, known](Status committed) {
    if (!*alive) return;
    if (!committed.ok()) return tracker_.Finish(job->spec.snapshot_name, committed);
    // Made before: look it up instead of asking Oxide to take it again.
    if (known) return Adopt(job, NotFound(""));
    Post(job);
  });
}

void SnapshotEngine::Post(const JobPtr& job) {
  backend::SnapshotCreate request{.name = job->spec.snapshot_name,
                                  .description = SnapshotDescriptionFor(job->spec.co_name),
                                  .disk = job->spec.source_volume_id};
  oxide_->CreateSnapshot(request, [this, alive = alive_, job](StatusOr<Snapshot> created) {
    if (!*alive) return;
    if (created.ok()) return Accept(job, *created);
    const Status& error = created.status();
    if (error.code() == StatusCode::kAlreadyExists || OutcomeUnknown(error)) {
      return Adopt(job, error);
    }
    if (error.code() == StatusCode::kNotFound) {
      return Fail(job, NotFound("source volume " + job->spec.source_volume_id +
                                " does not exist: Oxide has no disk with this id"));
    }
    Fail(job, error);
  });
}

// The snapshot may exist already (made before, or by a POST whose answer was lost): Oxide says.
void SnapshotEngine::Adopt(const JobPtr& job, const Status& post_error) {
  oxide_->GetSnapshot(
      job->spec.snapshot_name, [this, alive = alive_, job, post_error](StatusOr<Snapshot> found) {
        if (!*alive) return;
        if (found.ok()) {
          job->vanished_snapshot_id.clear();  // not vanished: Oxide has it
          Status matches = Matches(job->spec, *found);
          return matches.ok() ? Accept(job, *found) : Fail(job, matches);
        }
        if (found.status().code() == StatusCode::kNotFound) {
          if (post_error.code() == StatusCode::kNotFound) return Post(job);  // recorded, but gone
          return Fail(job, post_error.code() == StatusCode::kAlreadyExists
                               ? Unavailable("Oxide reported snapshot " + job->spec.snapshot_name +
                                             " as existing but cannot find it; retry")
                               : post_error);
        }
        Fail(job, found.status());
      });
}

void SnapshotEngine::Accept(const JobPtr& job, const Snapshot& snapshot) {
  const std::string key = job->spec.snapshot_name;
  if (!job->vanished_snapshot_id.empty() && job->vanished_snapshot_id != snapshot.id) {
    log::Warn("re-creating snapshot: its earlier snapshot vanished from Oxide",
              {{"snapshot_name", job->spec.co_name},
               {"old_snapshot_id", job->vanished_snapshot_id},
               {"snapshot_id", snapshot.id},
               {"source_volume_id", job->spec.source_volume_id}});
  }
  tracker_.Alias(key, snapshot.id);
  store::SnapshotRow row = RowFromSnapshot(snapshot, job->spec.co_name);
  snapshots_->Put(row);
  journal_->FinishOperation(job->op_id, kJournalDone,
                            std::string("snapshot ") + backend::SnapshotStatusName(snapshot.state));
  if (snapshot.state == backend::SnapshotStatus::kCreating) uploads_.Track(row);
  FinishWhenRecorded(key, job->op_id, snapshot);
}

void SnapshotEngine::FinishWhenRecorded(const std::string& key, int64_t op_id,
                                        SnapshotResult result) {
  commit_->WhenDurable([this, alive = alive_, key, op_id, result](Status committed) {
    if (!*alive) return;
    if (committed.ok()) return tracker_.Finish(key, result);
    tracker_.Finish(key, SnapshotResult(OutcomeNotRecorded("snapshot " + key, committed)));
    ReconcileLater(op_id);
  });
}

void SnapshotEngine::ReconcileLater(int64_t op_id) {
  ReconcileEntryLater(delayed_, *journal_, tracker_, op_id,
                      [this](const JournalEntry& e) { RecoverEntry(e, std::chrono::seconds(1)); });
}

void SnapshotEngine::Fail(const JobPtr& job, const Status& error) {
  const std::string key = job->spec.snapshot_name;
  std::optional<store::SnapshotRow> row = snapshots_->FindByName(key);
  if (row && row->snapshot_id.empty()) snapshots_->Remove(key);
  journal_->FinishOperation(job->op_id, kJournalFailed, JournalOutcome(error));
  FinishWhenRecorded(key, job->op_id, SnapshotResult(error));
}

// ---- DeleteSnapshot -------------------------------------------------------------------------

void SnapshotEngine::Delete(const std::string& snapshot_id, SnapshotWaiter done) {
  affinity_.Check("SnapshotEngine::Delete");
  if (tracker_.Admit(snapshot_id, "DeleteSnapshot", "", std::move(done)) !=
      BasicOperationTracker<SnapshotResult>::Admission::kStart) {
    return;
  }
  const int64_t op_id = journal_->BeginOperation(OperationKindName(OperationKind::kSnapshotDelete),
                                                 snapshot_id, "{}");
  commit_->WhenDurable([this, alive = alive_, snapshot_id, op_id](Status journaled) {
    if (!*alive) return;
    if (!journaled.ok()) return tracker_.Finish(snapshot_id, journaled);
    if (snapshots_->FindById(snapshot_id)) return DeleteKnown(snapshot_id, op_id);
    DeleteUnrecorded(snapshot_id, op_id);
  });
}

void SnapshotEngine::DeleteUnrecorded(const std::string& snapshot_id, int64_t op_id) {
  // An id this plugin has not seen: Oxide deletes by id in any project, so look first.
  oxide_->GetSnapshot(snapshot_id,
                      [this, alive = alive_, snapshot_id, op_id](StatusOr<Snapshot> found) {
                        if (!*alive) return;
                        if (found.ok()) return DeleteKnown(snapshot_id, op_id);
                        FinishDelete(snapshot_id, op_id, found.status());
                      });
}

void SnapshotEngine::DeleteKnown(const std::string& snapshot_id, int64_t op_id) {
  oxide_->DeleteSnapshot(snapshot_id, [this, alive = alive_, snapshot_id, op_id](Status deleted) {
    if (*alive) FinishDelete(snapshot_id, op_id, deleted);
  });
}

void SnapshotEngine::FinishDelete(const std::string& snapshot_id, int64_t op_id,
                                  const Status& deleted) {
  Status result = deleted;
  const char* state = kJournalFailed;
  if (deleted.ok() || deleted.code() == StatusCode::kNotFound) {
    result = Status::Ok();
    state = kJournalDone;
    if (auto row = snapshots_->FindById(snapshot_id)) snapshots_->Remove(row->snapshot_name);
    uploads_.Forget(snapshot_id);
  } else if (deleted.code() == StatusCode::kFailedPrecondition &&
             deleted.message().find("in state Creating") != std::string::npos) {
    result = Aborted("snapshot " + snapshot_id +
                     " is still being created by Oxide, which deletes a snapshot only once "
                     "it is ready; retry (ListSnapshots shows when ready_to_use is true)");
  }
  journal_->FinishOperation(op_id, state, JournalOutcome(result));
  FinishWhenRecorded(snapshot_id, op_id,
                     result.ok() ? SnapshotResult(Snapshot{}) : SnapshotResult(result));
}

// ---- recovery -------------------------------------------------------------------------------

size_t SnapshotEngine::RecoverUnfinished() {
  affinity_.Check("SnapshotEngine::RecoverUnfinished");
  std::vector<JournalEntry> entries;
  for (const store::OperationRow& row : journal_->UnfinishedOperations()) {
    if (!IsSnapshotKind(row.kind)) continue;  // the VolumeEngine's
    JournalEntry entry = ReadJournalEntry(row);
    WarnIfUnreadable(entry);
    if (entry.kind == OperationKind::kSnapshotCreate ||
        entry.kind == OperationKind::kSnapshotDelete) {
      entries.push_back(std::move(entry));
    }
  }
  // Newest first, as for volumes: when a snapshot has several open entries, the newest decides.
  std::vector<const JournalEntry*> deciding;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    if (tracker_.Busy(it->subject)) {
      journal_->FinishOperation(it->id, kJournalRolledBack, "superseded by a later operation");
      metrics::Families().recovery_entries.With({kJournalRolledBack}).Increment();
      continue;
    }
    tracker_.Admit(it->subject, "recovery of " + it->kind_name, "", [](const SnapshotResult&) {});
    deciding.push_back(&*it);
  }
  for (const JournalEntry* entry : deciding) {
    RecoverEntry(*entry, std::chrono::seconds(1));
  }
  const size_t found = entries.size();
  for (const store::SnapshotRow& row : snapshots_->Creating()) {
    if (!row.snapshot_id.empty()) uploads_.Track(row);
  }
  if (found > 0 || uploads_.tracking() > 0) {
    log::Info("reconciling snapshots with Oxide",
              {{"unfinished_operations", std::to_string(found)},
               {"uploads_tracked", std::to_string(uploads_.tracking())}});
  }
  return found;
}

void SnapshotEngine::RecoverEntry(const JournalEntry& entry,
                                  std::chrono::milliseconds retry_delay) {
  oxide_->GetSnapshot(entry.subject,
                      [this, alive = alive_, entry, retry_delay](StatusOr<Snapshot> found) {
                        if (*alive) RecoverFromReport(entry, retry_delay, std::move(found));
                      });
}

void SnapshotEngine::RecoverFromReport(const JournalEntry& entry,
                                       std::chrono::milliseconds retry_delay,
                                       StatusOr<Snapshot> found) {
  const std::string& key = entry.subject;
  const bool create = entry.kind == OperationKind::kSnapshotCreate;
  if (backend::IsInAnotherProject(found.status())) {
    // Never the project's (a delete of a foreign id that crashed before its lookup).
    return CloseEntry(entry, kJournalRolledBack,
                      "reconciled with Oxide: " + found.status().message());
  }
  if (!found.ok() && found.status().code() != StatusCode::kNotFound) {
    return RetryRecoveryLater(delayed_, entry, {"snapshot", key}, found.status(), retry_delay,
                              options_.recovery_retry_max,
                              [this, entry](auto next) { RecoverEntry(entry, next); });
  }
  std::optional<store::SnapshotRow> row =
      create ? snapshots_->FindByName(key) : snapshots_->FindById(key);
  if (!found.ok()) {
    // Gone: a create that never happened, or a delete that did.
    if (row) snapshots_->Remove(row->snapshot_name);
    return CloseEntry(entry, create ? kJournalRolledBack : kJournalDone,
                      "reconciled with Oxide: no such snapshot");
  }
  store::SnapshotRow seen = RowFromSnapshot(*found, row ? row->co_name : entry.co_name);
  snapshots_->Put(seen);
  if (found->state == backend::SnapshotStatus::kCreating) uploads_.Track(seen);
  CloseEntry(entry, create ? kJournalDone : kJournalRolledBack,
             "reconciled with Oxide: snapshot " + seen.state);
}

void SnapshotEngine::CloseEntry(const JournalEntry& entry, const char* state,
                                const std::string& note) {
  RecoveryCloseLog log{
      .not_recorded =
          "could not record the reconciliation of an unfinished snapshot operation; trying again",
      .reconciled = "reconciled an unfinished snapshot operation",
      .key_field = {"snapshot", entry.subject},
      .volume_id = "",
      .operation = "",
      .state = ""};
  CloseRecoveredEntry(
      *journal_, *commit_, alive_, entry.id, state, note, std::move(log),
      [this, key = entry.subject](const Status& closed) {
        tracker_.Finish(key, closed.ok() ? SnapshotResult(Snapshot{}) : SnapshotResult(closed));
      },
      [this, id = entry.id] { ReconcileLater(id); });
}

}  // namespace oxide::engine
