// The operation journal: every Oxide operation's intent (kind, subject, arguments) is written
// before Oxide is asked and its outcome after. Reads come from memory, where only unfinished
// entries are kept (MirrorTable); writes go to the store thread in the loop turn's batch
// (GroupCommit::WhenDurable tells when they are durable). Both the volume and the snapshot
// engines journal through it; VolumeStore owns it (it shares the volumes' database). Also keeps
// the operations_pending and oldest-pending-start gauges. Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loop/loop_affinity.h"
#include "store/group_commit.h"
#include "store/mirror_table.h"
#include "store/sqlite_handle.h"
#include "store/state_db.h"
#include "util/status.h"

namespace oxide::store {

// An unfinished entry (its state is `pending` and it has no outcome yet: only those are kept in
// memory; the database keeps the state and outcome of finished ones).
struct OperationRow {
  int64_t id = 0;
  std::string kind;  // create, delete, publish, unpublish, snapshot_create, snapshot_delete
  // What the entry is about: the disk name for create, the snapshot name for snapshot_create,
  // the snapshot id for snapshot_delete, the volume id otherwise (SQLite column `volume`).
  std::string subject;
  std::string args;        // JSON: what recovery needs to finish the operation
  int64_t started_ms = 0;  // wall time the entry was journaled (the store's wall_ms clock)
};

class Journal {
 public:
  // Reads the unfinished entries into memory (at start, before `commit` has taken the connection
  // into use). `wall_ms` stamps entries (the JournalPruner ages them by it; null: NowMs). One
  // Journal per database (the VolumeStore's): each counts entry ids on its own.
  Journal(StateDb* db, GroupCommit* commit, std::function<int64_t()> wall_ms);

  // Journals the intent of an operation; returns its id.
  int64_t BeginOperation(const std::string& kind, const std::string& subject,
                         const std::string& args);
  // `state`: done, failed or rolled_back. The entry leaves memory; the database keeps it.
  void FinishOperation(int64_t id, const std::string& state, const std::string& outcome);
  std::vector<OperationRow> UnfinishedOperations() const;
  std::optional<OperationRow> FindUnfinishedOperation(int64_t id) const;
  // Called after each FinishOperation (the JournalPruner counts finished entries this way).
  void SetFinishListener(std::function<void()> listener) { on_finish_ = std::move(listener); }
  // OK when the entries were all read at construction (fixed then, so not checked).
  const Status& load_status() const { return load_status_; }

 private:
  void Load(sqlite3* db);
  // oxide_csi_operations_pending{kind}: kept from the unfinished entries in memory.
  void CountPending(const std::string& kind, int64_t delta);
  void RecountPending();
  // oxide_csi_oldest_pending_operation_start_time_seconds: the start of the unfinished entry
  // with the smallest id (ids grow with time, so that is the oldest, also across restarts).
  void PublishOldestPending() const;

  GroupCommit* commit_;
  Status load_status_;
  MirrorTable<int64_t, OperationRow> unfinished_;
  int64_t next_operation_id_ = 1;
  std::map<std::string, int64_t> pending_by_kind_;  // kinds are a fixed small set
  std::function<int64_t()> wall_ms_;                // called on the loop thread only
  std::function<void()> on_finish_;
  // Prepared at start; used by the store thread only afterwards.
  Statement begin_op_, finish_op_;
  LoopAffinity affinity_;
  BatchListener listener_;  // last: commits what is pending before the statements go
};

}  // namespace oxide::store
