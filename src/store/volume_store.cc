#include "store/volume_store.h"

#include <chrono>

namespace oxide::store {
namespace {

constexpr const char* kVolumeColumns =
    "disk_name, ifnull(volume_id, ''), co_name, size, block_size, state, node_id";
constexpr const char* kOperationColumns = "id, kind, volume, args, state, outcome";

}  // namespace

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

VolumeStore::VolumeStore(StateDb* db, GroupCommit* commit) : db_(db), commit_(commit) {
  sqlite3* h = db->handle();
  std::string volumes = std::string("SELECT ") + kVolumeColumns + " FROM volumes ";
  find_by_name_ = Statement(h, volumes + "WHERE disk_name = ?1");
  find_by_id_ = Statement(h, volumes + "WHERE volume_id = ?1");
  all_ = Statement(h, volumes + "ORDER BY disk_name");
  // A volume keeps its disk name and, once Oxide made the disk, its UUID; most writes change
  // only its state. Updating the row in place dirties the one page holding it, where a replace
  // (delete and insert) also rewrites both indexes: about a third of the WAL pages per commit.
  update_ = Statement(h,
                      "UPDATE volumes SET co_name = ?3, size = ?4, block_size = ?5, state = ?6, "
                      "node_id = ?7, updated_ms = ?8 WHERE disk_name = ?1 AND "
                      "volume_id IS nullif(?2, '')");
  put_ =
      Statement(h,
                "INSERT OR REPLACE INTO volumes(disk_name, volume_id, co_name, size, block_size, "
                "state, node_id, updated_ms) VALUES (?1, nullif(?2, ''), ?3, ?4, ?5, ?6, ?7, ?8)");
  remove_ = Statement(h, "DELETE FROM volumes WHERE disk_name = ?1");
  std::string operations = std::string("SELECT ") + kOperationColumns + " FROM operations ";
  begin_op_ = Statement(h,
                        "INSERT INTO operations(kind, volume, args, state, outcome, started_ms) "
                        "VALUES (?1, ?2, ?3, 'pending', '', ?4)");
  finish_op_ = Statement(h,
                         "UPDATE operations SET state = ?2, outcome = ?3, finished_ms = ?4 "
                         "WHERE id = ?1");
  unfinished_ops_ = Statement(h, operations + "WHERE state = 'pending' ORDER BY id");
  find_op_ = Statement(h, operations + "WHERE id = ?1");
  prune_ = Statement(h, "DELETE FROM operations WHERE state != 'pending' AND finished_ms < ?1");
}

Status VolumeStore::Failed(const char* what) {
  return Internal(std::string("state database: cannot ") + what + ": " +
                  sqlite3_errmsg(db_->handle()));
}

VolumeRow VolumeStore::ReadVolume(const Statement& s) {
  return {.disk_name = s.ColumnText(0),
          .volume_id = s.ColumnText(1),
          .co_name = s.ColumnText(2),
          .size = static_cast<uint64_t>(s.ColumnInt(3)),
          .block_size = static_cast<uint64_t>(s.ColumnInt(4)),
          .state = s.ColumnText(5),
          .node_id = s.ColumnText(6)};
}

OperationRow VolumeStore::ReadOperation(const Statement& s) {
  return {.id = s.ColumnInt(0),
          .kind = s.ColumnText(1),
          .volume = s.ColumnText(2),
          .args = s.ColumnText(3),
          .state = s.ColumnText(4),
          .outcome = s.ColumnText(5)};
}

std::optional<VolumeRow> VolumeStore::FindByDiskName(const std::string& disk_name) {
  std::optional<VolumeRow> row;
  if (find_by_name_.Bind(1, disk_name).Step() == SQLITE_ROW) row = ReadVolume(find_by_name_);
  find_by_name_.Reset();
  return row;
}

std::optional<VolumeRow> VolumeStore::FindByVolumeId(const std::string& volume_id) {
  std::optional<VolumeRow> row;
  if (!volume_id.empty() && find_by_id_.Bind(1, volume_id).Step() == SQLITE_ROW) {
    row = ReadVolume(find_by_id_);
  }
  find_by_id_.Reset();
  return row;
}

std::vector<VolumeRow> VolumeStore::AllVolumes() {
  std::vector<VolumeRow> rows;
  while (all_.Step() == SQLITE_ROW)
    rows.push_back(ReadVolume(all_));
  all_.Reset();
  return rows;
}

Status VolumeStore::Put(const VolumeRow& row) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  const int64_t now = NowMs();
  for (Statement* write : {&update_, &put_}) {
    write->Bind(1, row.disk_name)
        .Bind(2, row.volume_id)
        .Bind(3, row.co_name)
        .Bind(4, static_cast<int64_t>(row.size))
        .Bind(5, static_cast<int64_t>(row.block_size))
        .Bind(6, row.state)
        .Bind(7, row.node_id)
        .Bind(8, now);
    if (!write->Run(db_->handle()).ok()) return Failed("record a volume");
    if (sqlite3_changes(db_->handle()) > 0) break;  // else a new row, or a new UUID: replace
  }
  return Status::Ok();
}

Status VolumeStore::Remove(const std::string& disk_name) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  return remove_.Bind(1, disk_name).Run(db_->handle()).ok() ? Status::Ok()
                                                            : Failed("remove a volume");
}

StatusOr<int64_t> VolumeStore::BeginOperation(const std::string& kind, const std::string& volume,
                                              const std::string& args) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  begin_op_.Bind(1, kind).Bind(2, volume).Bind(3, args).Bind(4, NowMs());
  if (!begin_op_.Run(db_->handle()).ok()) return Failed("journal an operation");
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_->handle()));
}

Status VolumeStore::FinishOperation(int64_t id, const std::string& state,
                                    const std::string& outcome) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  finish_op_.Bind(1, id).Bind(2, state).Bind(3, outcome).Bind(4, NowMs());
  return finish_op_.Run(db_->handle()).ok() ? Status::Ok() : Failed("close a journal entry");
}

std::vector<OperationRow> VolumeStore::UnfinishedOperations() {
  std::vector<OperationRow> rows;
  while (unfinished_ops_.Step() == SQLITE_ROW)
    rows.push_back(ReadOperation(unfinished_ops_));
  unfinished_ops_.Reset();
  return rows;
}

std::optional<OperationRow> VolumeStore::FindOperation(int64_t id) {
  std::optional<OperationRow> row;
  if (find_op_.Bind(1, id).Step() == SQLITE_ROW) row = ReadOperation(find_op_);
  find_op_.Reset();
  return row;
}

StatusOr<int64_t> VolumeStore::PruneFinished(int64_t age_ms) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  if (!prune_.Bind(1, NowMs() - age_ms).Run(db_->handle()).ok()) return Failed("prune the journal");
  return static_cast<int64_t>(sqlite3_changes(db_->handle()));
}

}  // namespace oxide::store
