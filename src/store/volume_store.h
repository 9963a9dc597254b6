// Typed access to the controller's volume table (the per-volume state records), and the owner of
// the operation journal (store/journal.h) kept in the same database. Reads come from memory
// (MirrorTable); writes change memory at once and go to the store thread in the loop turn's batch
// (GroupCommit::WhenDurable tells when they are durable). Loop thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loop/loop_affinity.h"
#include "store/group_commit.h"
#include "store/journal.h"
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

class VolumeStore {
 public:
  // Reads the volumes and the unfinished journal entries into memory (at start, before `commit`
  // has taken the connection into use). `wall_ms` (default: NowMs) stamps rows and journal
  // entries (the JournalPruner ages them by it); a test can pass its ManualClock's WallMillis.
  VolumeStore(StateDb* db, GroupCommit* commit, std::function<int64_t()> wall_ms = nullptr);

  std::optional<VolumeRow> FindByDiskName(const std::string& disk_name) const;
  std::optional<VolumeRow> FindByVolumeId(const std::string& volume_id) const;
  void Put(const VolumeRow& row);  // insert or replace, keyed by disk_name
  void Remove(const std::string& disk_name);
  std::vector<VolumeRow> AllVolumes() const;

  // The operation journal (a reference fixed at construction: not checked).
  Journal& journal() { return journal_; }
  const Journal& journal() const { return journal_; }
  // OK when the rows and the unfinished journal entries were all read at construction; otherwise
  // the plugin must not start. Fixed at construction, so not checked: it is read right after the
  // constructor, on its thread.
  const Status& load_status() const {
    return load_status_.ok() ? journal_.load_status() : load_status_;
  }

 private:
  void Load(sqlite3* db);

  GroupCommit* commit_;
  Status load_status_;
  MirrorTable<std::string, VolumeRow> volumes_{&VolumeRow::volume_id};
  std::function<int64_t()> wall_ms_;  // called on the loop thread only
  Journal journal_;
  // Prepared at start; used by the store thread only afterwards.
  Statement update_, put_, remove_;
  LoopAffinity affinity_;
  BatchListener listener_;  // last: commits what is pending before the statements go
};

}  // namespace oxide::store
