// Typed access to the controller's snapshots table: the snapshots this plugin made, and every
// snapshot it is tracking until Oxide reports it ready. Writes join the loop turn's group-commit
// transaction. Loop thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/group_commit.h"
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
  SnapshotStore(StateDb* db, GroupCommit* commit);

  std::optional<SnapshotRow> FindByName(const std::string& snapshot_name);
  std::optional<SnapshotRow> FindById(const std::string& snapshot_id);
  Status Put(const SnapshotRow& row);  // insert or replace, keyed by snapshot_name
  Status Remove(const std::string& snapshot_name);
  // Every snapshot Oxide last reported as still being created.
  std::vector<SnapshotRow> Creating();

 private:
  Status Failed(const char* what);
  static SnapshotRow Read(const Statement& statement);

  StateDb* db_;
  GroupCommit* commit_;
  Statement find_by_name_, find_by_id_, put_, remove_, creating_;
};

}  // namespace oxide::store
