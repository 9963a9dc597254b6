// Typed access to the controller's tables: the per-volume state records and the operation
// journal (intent, then outcome). Writes join the loop turn's group-commit transaction.
// Loop thread only.
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
};

class VolumeStore {
 public:
  VolumeStore(StateDb* db, GroupCommit* commit);

  std::optional<VolumeRow> FindByDiskName(const std::string& disk_name);
  std::optional<VolumeRow> FindByVolumeId(const std::string& volume_id);
  Status Put(const VolumeRow& row);  // insert or replace, keyed by disk_name
  Status Remove(const std::string& disk_name);
  std::vector<VolumeRow> AllVolumes();

  // Journals the intent of an operation; returns its id.
  StatusOr<int64_t> BeginOperation(const std::string& kind, const std::string& volume,
                                   const std::string& args);
  // `state`: done, failed or rolled_back.
  Status FinishOperation(int64_t id, const std::string& state, const std::string& outcome);
  std::vector<OperationRow> UnfinishedOperations();
  std::optional<OperationRow> FindOperation(int64_t id);
  // Forgets finished operations older than `age_ms`; returns how many.
  StatusOr<int64_t> PruneFinished(int64_t age_ms);

 private:
  Status Failed(const char* what);
  static VolumeRow ReadVolume(const Statement& statement);
  static OperationRow ReadOperation(const Statement& statement);

  StateDb* db_;
  GroupCommit* commit_;
  Statement find_by_name_, find_by_id_, update_, put_, remove_, all_;
  Statement begin_op_, finish_op_, unfinished_ops_, find_op_, prune_;
};

int64_t NowMs();

}  // namespace oxide::store
