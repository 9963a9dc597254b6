// The controller's snapshot operations: create (journaled before Oxide is asked; the answer comes
// when Oxide reports the snapshot ready, or — still being created — before the caller's deadline
// once Oxide shows it) and delete, with a per-snapshot OperationTracker (identical retries join,
// other calls get ABORTED), upload tracking of every snapshot still `creating`, and recovery of
// unfinished snapshot journal entries at start and, for an outcome a failed commit could not
// record, in the run once the database takes writes again. Loop thread only.
#pragma once

#include <uv.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "backend/oxide_client.h"
#include "engine/journal_entry.h"
#include "engine/operation_tracker.h"
#include "engine/snapshot_upload_tracker.h"
#include "loop/delayed_tasks.h"
#include "loop/loop_affinity.h"
#include "store/group_commit.h"
#include "store/journal.h"
#include "store/snapshot_store.h"

namespace oxide::engine {

using SnapshotResult = StatusOr<backend::Snapshot>;
using SnapshotWaiter = std::function<void(const SnapshotResult&)>;

struct SnapshotSpec {
  std::string co_name, snapshot_name, source_volume_id;
};

struct SnapshotEngineOptions {
  UploadTrackerOptions uploads;
  // While Oxide has not yet shown a snapshot whose answer is due, ask it again this often.
  std::chrono::milliseconds lookup_retry{500};
  std::chrono::milliseconds recovery_retry_max{std::chrono::seconds(30)};
};

class SnapshotEngine {
 public:
  SnapshotEngine(Clock* clock, backend::OxideClient* oxide, store::Journal* journal,
                 store::SnapshotStore* snapshots, store::GroupCommit* commit,
                 SnapshotEngineOptions options = {});
  ~SnapshotEngine();
  SnapshotEngine(const SnapshotEngine&) = delete;
  SnapshotEngine& operator=(const SnapshotEngine&) = delete;

  // `done` runs once: with the snapshot when Oxide reports it ready or faulted, or — when
  // `answer_by` comes first — as Oxide last showed it (`creating`), or with the error.
  void Create(const SnapshotSpec& spec, Clock::TimePoint answer_by, SnapshotWaiter done);
  // OK (an empty snapshot) when the snapshot is gone.
  void Delete(const std::string& snapshot_id, SnapshotWaiter done);

  // Reconciles unfinished snapshot journal entries with Oxide and resumes tracking every snapshot
  // recorded as `creating`. Returns how many journal entries were found.
  size_t RecoverUnfinished();

  const BasicOperationTracker<SnapshotResult>& tracker() const {
    affinity_.Check("SnapshotEngine::tracker");
    return tracker_;
  }
  // The same operations, for a shutdown that waits for them (not the upload tracking of
  // snapshots Oxide still creates: their journal entries are closed).
  OperationsInFlight& operations() {
    affinity_.Check("SnapshotEngine::operations");
    return tracker_;
  }
  // The clock `answer_by` is on (a pointer fixed at construction: not checked).
  Clock& clock() const { return *clock_; }
  SnapshotUploadTracker& uploads() {
    affinity_.Check("SnapshotEngine::uploads");
    return uploads_;
  }

 private:
  struct Job;
  using JobPtr = std::shared_ptr<Job>;
  struct Answer;
  using AnswerPtr = std::shared_ptr<Answer>;

  void StartCreate(const SnapshotSpec& spec);
  void Post(const JobPtr& job);
  void Adopt(const JobPtr& job, const Status& post_error);
  void Accept(const JobPtr& job, const backend::Snapshot& snapshot);
  void Fail(const JobPtr& job, const Status& error);
  // An id this replica has no row for: Oxide is asked for it first (it deletes by id in any
  // project), then DeleteKnown, or FinishDelete with Oxide's answer.
  void DeleteUnrecorded(const std::string& snapshot_id, int64_t op_id);
  // DeleteSnapshot's Oxide call for an id known to be the project's, and the journal close.
  void DeleteKnown(const std::string& snapshot_id, int64_t op_id);
  void FinishDelete(const std::string& snapshot_id, int64_t op_id, const Status& deleted);
  // Answers the call on `key` with `result` once its journal outcome is durable; when it cannot
  // be recorded, answers UNAVAILABLE saying so and reconciles the entry later (ReconcileLater).
  void FinishWhenRecorded(const std::string& key, int64_t op_id, SnapshotResult result);
  // Re-runs the recovery of journal entry `op_id` in a second, if it is still pending then.
  void ReconcileLater(int64_t op_id);
  // Whether `snapshot` is the one `spec` asks for; else the ALREADY_EXISTS to answer.
  Status Matches(const SnapshotSpec& spec, const backend::Snapshot& snapshot) const;

  void AnswerAccepted(const AnswerPtr& answer, const SnapshotResult& accepted);
  void AnswerWhenVisible(const AnswerPtr& answer);

  void RecoverEntry(const JournalEntry& entry, std::chrono::milliseconds retry_delay);
  // What Oxide reports of the entry's snapshot settles the entry.
  void RecoverFromReport(const JournalEntry& entry, std::chrono::milliseconds retry_delay,
                         StatusOr<backend::Snapshot> found);
  // Closes the entry (CloseRecoveredEntry) and answers its key.
  void CloseEntry(const JournalEntry& entry, const char* state, const std::string& note);

  Clock* clock_;
  backend::OxideClient* oxide_;
  store::Journal* journal_;
  store::SnapshotStore* snapshots_;
  store::GroupCommit* commit_;
  SnapshotEngineOptions options_;
  BasicOperationTracker<SnapshotResult> tracker_{"snapshot"};
  SnapshotUploadTracker uploads_;
  DelayedTasks delayed_;
  LoopAffinity affinity_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// A snapshot as the plugin recorded it (for answers that need not ask Oxide again).
backend::Snapshot SnapshotFromRow(const store::SnapshotRow& row);
store::SnapshotRow RowFromSnapshot(const backend::Snapshot& snapshot, const std::string& co_name);

}  // namespace oxide::engine
