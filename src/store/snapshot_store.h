// Typed access to the controller's snapshots table: the snapshots this plugin made, and every
// snapshot it is tracking until Oxide reports it ready. Reads come from memory (MirrorTable);
// writes change memory at once and go to the store thread in the loop turn's batch. Loop thread
// only.
#pragma once

#include <cstdint>
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

struct SnapshotRow {
  std::string snapshot_name;  // key: derived from the CO name
  std::string snapshot_id;    // the Oxide snapshot id; empty until Oxide accepted the snapshot
  std::string co_name;        // empty for snapshots this plugin did not make
  std::string source_volume_id;
  uint64_t size = 0;
  std::string state;  // creating, ready, faulted (as Oxide said last), or deleting
  std::string time_created;
  int64_t polls = 0;  // how often the upload tracker asked Oxide about it
};

class SnapshotStore {
 public:
  // Reads the table into memory (at start, before `commit` has taken the connection into use).
  SnapshotStore(StateDb* db, GroupCommit* commit);

  std::optional<SnapshotRow> FindByName(const std::string& snapshot_name) const;
  std::optional<SnapshotRow> FindById(const std::string& snapshot_id) const;
  void Put(const SnapshotRow& row);  // insert or replace, keyed by snapshot_name
  void Remove(const std::string& snapshot_name);
  // Every snapshot Oxide last reported as still being created.
  std::vector<SnapshotRow> Creating() const;

  // OK when the rows were all read at construction; otherwise the plugin must not start. Fixed
  // at construction, so not checked: it is read right after the constructor, on its thread.
  const Status& load_status() const { return load_status_; }

 private:
  GroupCommit* commit_;
  Status load_status_;
  MirrorTable<std::string, SnapshotRow> snapshots_{&SnapshotRow::snapshot_id};
  Statement put_, remove_;  // prepared at start; used by the store thread only afterwards
  LoopAffinity affinity_;
  BatchListener listener_;  // last: commits what is pending before the statements go
};

}  // namespace oxide::store
