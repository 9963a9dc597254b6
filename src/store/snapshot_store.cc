#include "store/snapshot_store.h"

#include "store/volume_store.h"

namespace oxide::store {
namespace {

constexpr const char* kColumns =
    "snapshot_name, ifnull(snapshot_id, ''), co_name, source_volume_id, size, state, "
    "time_created, polls";

}  // namespace

SnapshotStore::SnapshotStore(StateDb* db, GroupCommit* commit) : db_(db), commit_(commit) {
  sqlite3* h = db->handle();
  std::string select = std::string("SELECT ") + kColumns + " FROM snapshots ";
  find_by_name_ = Statement(h, select + "WHERE snapshot_name = ?1");
  find_by_id_ = Statement(h, select + "WHERE snapshot_id = ?1");
  creating_ = Statement(h, select + "WHERE state = 'creating' ORDER BY snapshot_name");
  put_ = Statement(h,
                   "INSERT OR REPLACE INTO snapshots(snapshot_name, snapshot_id, co_name, "
                   "source_volume_id, size, state, time_created, polls, updated_ms) "
                   "VALUES (?1, nullif(?2, ''), ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  remove_ = Statement(h, "DELETE FROM snapshots WHERE snapshot_name = ?1");
}

Status SnapshotStore::Failed(const char* what) {
  return Internal(std::string("state database: cannot ") + what + ": " +
                  sqlite3_errmsg(db_->handle()));
}

SnapshotRow SnapshotStore::Read(const Statement& s) {
  return {.snapshot_name = s.ColumnText(0),
          .snapshot_id = s.ColumnText(1),
          .co_name = s.ColumnText(2),
          .source_volume_id = s.ColumnText(3),
          .size = static_cast<uint64_t>(s.ColumnInt(4)),
          .state = s.ColumnText(5),
          .time_created = s.ColumnText(6),
          .polls = s.ColumnInt(7)};
}

std::optional<SnapshotRow> SnapshotStore::FindByName(const std::string& snapshot_name) {
  std::optional<SnapshotRow> row;
  if (find_by_name_.Bind(1, snapshot_name).Step() == SQLITE_ROW) row = Read(find_by_name_);
  find_by_name_.Reset();
  return row;
}

std::optional<SnapshotRow> SnapshotStore::FindById(const std::string& snapshot_id) {
  std::optional<SnapshotRow> row;
  if (!snapshot_id.empty() && find_by_id_.Bind(1, snapshot_id).Step() == SQLITE_ROW) {
    row = Read(find_by_id_);
  }
  find_by_id_.Reset();
  return row;
}

std::vector<SnapshotRow> SnapshotStore::Creating() {
  std::vector<SnapshotRow> rows;
  while (creating_.Step() == SQLITE_ROW)
    rows.push_back(Read(creating_));
  creating_.Reset();
  return rows;
}

Status SnapshotStore::Put(const SnapshotRow& row) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  put_.Bind(1, row.snapshot_name)
      .Bind(2, row.snapshot_id)
      .Bind(3, row.co_name)
      .Bind(4, row.source_volume_id)
      .Bind(5, static_cast<int64_t>(row.size))
      .Bind(6, row.state)
      .Bind(7, row.time_created)
      .Bind(8, row.polls)
      .Bind(9, NowMs());
  return put_.Run(db_->handle()).ok() ? Status::Ok() : Failed("record a snapshot");
}

Status SnapshotStore::Remove(const std::string& snapshot_name) {
  Status begun = commit_->BeginWrite();
  if (!begun.ok()) return begun;
  return remove_.Bind(1, snapshot_name).Run(db_->handle()).ok() ? Status::Ok()
                                                                : Failed("remove a snapshot");
}

}  // namespace oxide::store
