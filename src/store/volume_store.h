// Typed access to the controller's tables: the per-volume state records and the operation
// journal (intent, then outcome). Reads come from memory (MirrorTable); writes change memory at
// once and go to the store thread in the loop turn's batch (GroupCommit::WhenDurable tells when
// they are durable). Only unfinished journal entries are kept in memory. Loop thread only.
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

struct VolumeRow {
  std::string disk_name;  // key: derived from the CO name
  std::string volume_id;  // the Oxide disk id; empty until Oxide created the disk
  std::string co_name;    // empty for volumes adopted from Oxide (made by another replica)
  uint64_t size = 0;
  uint64_t block_size = 0;
  std::string state;    // a VolumeState name (engine/volume_state.h)
  std::string node_id;  // the instance while publishing, published or unpublishing
};

struct OperationRow {
  int64_t id = 0;
  std::string kind;    // create, delete, publish, unpublish
  std::string volume;  // the disk name for create, the volume id otherwise
  std::string args;    // JSON: what recovery needs to finish the operation
  std::string state;   // pending, done, failed, rolled_back
  std::string outcome;
  int64_t started_ms = 0;  // wall time the entry was journaled (the store's wall_ms clock)
};

class VolumeStore {
 public:
  // Reads the volumes and the unfinished journal entries into memory (at start, before `commit`
  // has taken the connection into use). `wall_ms` (default: NowMs) stamps journal entries
  // (the JournalPruner ages them by it); a test can pass its ManualClock's WallMillis.
  VolumeStore(StateDb* db, GroupCommit* commit, std::function<int64_t()> wall_ms = nullptr);

  std::optional<VolumeRow> FindByDiskName(const std::string& disk_name) const;
  std::optional<VolumeRow> FindByVolumeId(const std::string& volume_id) const;
  void Put(const VolumeRow& row);  // insert or replace, keyed by disk_name
  void Remove(const std::string& disk_name);
  std::vector<VolumeRow> AllVolumes() const;

  // Journals the intent of an operation; returns its id.
  int64_t BeginOperation(const std::string& kind, const std::string& volume,
                         const std::string& args);
  // `state`: done, failed or rolled_back. The entry leaves memory; the database keeps it.
  void FinishOperation(int64_t id, const std::string& state, const std::string& outcome);
  std::vector<OperationRow> UnfinishedOperations() const;
  std::optional<OperationRow> FindUnfinishedOperation(int64_t id) const;
  // Called after each FinishOperation (the JournalPruner counts finished entries this way).
  void SetFinishListener(std::function<void()> listener) { on_finish_ = std::move(listener); }
  // OK when the rows were all read at construction; otherwise the plugin must not start. Fixed
  // at construction, so not checked: it is read right after the constructor, on its thread.
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
  MirrorTable<std::string, VolumeRow> volumes_{&VolumeRow::volume_id};
  MirrorTable<int64_t, OperationRow> unfinished_;
  int64_t next_operation_id_ = 1;
  std::map<std::string, int64_t> pending_by_kind_;  // kinds are a fixed small set
  std::function<int64_t()> wall_ms_;                // called on the loop thread only
  std::function<void()> on_finish_;
  // Prepared at start; used by the store thread only afterwards.
  Statement update_, put_, remove_, begin_op_, finish_op_;
  LoopAffinity affinity_;
  BatchListener listener_;  // last: commits what is pending before the statements go
};

int64_t NowMs();

}  // namespace oxide::store
