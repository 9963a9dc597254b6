#include "store/snapshot_store.h"

namespace oxide::store {
namespace {

constexpr const char* kColumns =
    "snapshot_name, ifnull(snapshot_id, ''), co_name, source_volume_id, size, state, "
    "time_created, polls";

}  // namespace

SnapshotStore::SnapshotStore(StateDb* db, GroupCommit* commit)
    : commit_(commit),
      listener_(commit, [this](uint64_t batch, bool ok) { snapshots_.BatchDone(batch, ok); }) {
  sqlite3* h = db->handle();
  put_ = Statement(h,
                   "INSERT OR REPLACE INTO snapshots(snapshot_name, snapshot_id, co_name, "
                   "source_volume_id, size, state, time_created, polls, updated_ms) "
                   "VALUES (?1, nullif(?2, ''), ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  remove_ = Statement(h, "DELETE FROM snapshots WHERE snapshot_name = ?1");
  load_status_ = ForEachRow(h, std::string("SELECT ") + kColumns + " FROM snapshots",
                            "the snapshots", [this](const Statement& snapshot) {
                              SnapshotRow row;
                              ReadColumns(snapshot, row.snapshot_name, row.snapshot_id, row.co_name,
                                          row.source_volume_id, row.size, row.state,
                                          row.time_created, row.polls);
                              std::string key = row.snapshot_name;
                              snapshots_.Load(key, std::move(row));
                            });
}

std::optional<SnapshotRow> SnapshotStore::FindByName(const std::string& snapshot_name) const {
  affinity_.Check("SnapshotStore::FindByName");
  const SnapshotRow* row = snapshots_.Find(snapshot_name);
  return row ? std::optional<SnapshotRow>(*row) : std::nullopt;
}

std::optional<SnapshotRow> SnapshotStore::FindById(const std::string& snapshot_id) const {
  affinity_.Check("SnapshotStore::FindById");
  const SnapshotRow* row = snapshots_.FindUnique(snapshot_id);
  return row ? std::optional<SnapshotRow>(*row) : std::nullopt;
}

std::vector<SnapshotRow> SnapshotStore::Creating() const {
  affinity_.Check("SnapshotStore::Creating");
  std::vector<SnapshotRow> rows;
  for (const auto& [name, row] : snapshots_.rows()) {
    if (row.state == "creating") rows.push_back(row);
  }
  return rows;
}

void SnapshotStore::Put(const SnapshotRow& row) {
  affinity_.Check("SnapshotStore::Put");
  uint64_t batch = commit_->Write([this, row, now = NowMs()](sqlite3* db) {
    return put_.Bind(1, row.snapshot_name)
        .Bind(2, row.snapshot_id)
        .Bind(3, row.co_name)
        .Bind(4, row.source_volume_id)
        .Bind(5, static_cast<int64_t>(row.size))
        .Bind(6, row.state)
        .Bind(7, row.time_created)
        .Bind(8, row.polls)
        .Bind(9, now)
        .Run(db);
  });
  snapshots_.Write(batch, row.snapshot_name, row);
}

void SnapshotStore::Remove(const std::string& snapshot_name) {
  affinity_.Check("SnapshotStore::Remove");
  uint64_t batch = commit_->Write(
      [this, snapshot_name](sqlite3* db) { return remove_.Bind(1, snapshot_name).Run(db); });
  snapshots_.Write(batch, snapshot_name, std::nullopt);
}

}  // namespace oxide::store
