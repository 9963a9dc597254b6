#include "store/volume_store.h"

#include <chrono>

#include "metrics/plugin_metrics.h"

namespace oxide::store {
namespace {

constexpr const char* kVolumeColumns =
    "disk_name, ifnull(volume_id, ''), co_name, size, block_size, state, node_id";
constexpr const char* kOperationColumns = "id, kind, volume, args, state, outcome, started_ms";

}  // namespace

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

VolumeStore::VolumeStore(StateDb* db, GroupCommit* commit, std::function<int64_t()> wall_ms)
    : commit_(commit),
      wall_ms_(wall_ms ? std::move(wall_ms) : NowMs),
      listener_(commit, [this](uint64_t batch, bool ok) {
        volumes_.BatchDone(batch, ok);
        unfinished_.BatchDone(batch, ok);
        if (!ok) RecountPending();  // the batch's journal entries were undone
      }) {
  sqlite3* h = db->handle();
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
  begin_op_ =
      Statement(h,
                "INSERT INTO operations(id, kind, volume, args, state, outcome, started_ms) "
                "VALUES (?1, ?2, ?3, ?4, 'pending', '', ?5)");
  finish_op_ = Statement(h,
                         "UPDATE operations SET state = ?2, outcome = ?3, finished_ms = ?4 "
                         "WHERE id = ?1");
  Load(h);
}

void VolumeStore::Load(sqlite3* db) {
  Statement volumes(db, std::string("SELECT ") + kVolumeColumns + " FROM volumes");
  int step = SQLITE_ROW;
  while ((step = volumes.Step()) == SQLITE_ROW) {
    VolumeRow row{.disk_name = volumes.ColumnText(0),
                  .volume_id = volumes.ColumnText(1),
                  .co_name = volumes.ColumnText(2),
                  .size = static_cast<uint64_t>(volumes.ColumnInt(3)),
                  .block_size = static_cast<uint64_t>(volumes.ColumnInt(4)),
                  .state = volumes.ColumnText(5),
                  .node_id = volumes.ColumnText(6)};
    std::string key = row.disk_name;
    volumes_.Load(key, std::move(row));
  }
  if (load_status_ = ReadToTheEnd(db, step, "the volumes"); !load_status_.ok()) return;
  Statement operations(
      db, std::string("SELECT ") + kOperationColumns + " FROM operations WHERE state = 'pending'");
  while ((step = operations.Step()) == SQLITE_ROW) {
    OperationRow row{.id = operations.ColumnInt(0),
                     .kind = operations.ColumnText(1),
                     .volume = operations.ColumnText(2),
                     .args = operations.ColumnText(3),
                     .state = operations.ColumnText(4),
                     .outcome = operations.ColumnText(5),
                     .started_ms = operations.ColumnInt(6)};
    const int64_t id = row.id;
    unfinished_.Load(id, std::move(row));
  }
  RecountPending();
  if (load_status_ = ReadToTheEnd(db, step, "the unfinished operations"); !load_status_.ok()) {
    return;
  }
  Statement last(db, "SELECT ifnull(max(id), 0) FROM operations");
  if (last.Step() != SQLITE_ROW) {
    load_status_ = ReadToTheEnd(db, SQLITE_ERROR, "the last operation id");
    return;
  }
  next_operation_id_ = last.ColumnInt(0) + 1;
}

std::optional<VolumeRow> VolumeStore::FindByDiskName(const std::string& disk_name) const {
  affinity_.Check("VolumeStore::FindByDiskName");
  const VolumeRow* row = volumes_.Find(disk_name);
  return row ? std::optional<VolumeRow>(*row) : std::nullopt;
}

std::optional<VolumeRow> VolumeStore::FindByVolumeId(const std::string& volume_id) const {
  affinity_.Check("VolumeStore::FindByVolumeId");
  const VolumeRow* row = volumes_.FindUnique(volume_id);
  return row ? std::optional<VolumeRow>(*row) : std::nullopt;
}

std::vector<VolumeRow> VolumeStore::AllVolumes() const {
  affinity_.Check("VolumeStore::AllVolumes");
  std::vector<VolumeRow> rows;
  rows.reserve(volumes_.rows().size());
  for (const auto& [disk_name, row] : volumes_.rows())
    rows.push_back(row);
  return rows;
}

void VolumeStore::Put(const VolumeRow& row) {
  affinity_.Check("VolumeStore::Put");
  const int64_t now = wall_ms_();
  uint64_t batch = commit_->Write([this, row, now](sqlite3* db) {
    for (Statement* write : {&update_, &put_}) {
      write->Bind(1, row.disk_name)
          .Bind(2, row.volume_id)
          .Bind(3, row.co_name)
          .Bind(4, static_cast<int64_t>(row.size))
          .Bind(5, static_cast<int64_t>(row.block_size))
          .Bind(6, row.state)
          .Bind(7, row.node_id)
          .Bind(8, now);
      Status written = write->Run(db);
      if (!written.ok()) return written;
      if (sqlite3_changes(db) > 0) break;  // else a new row, or a new UUID: replace
    }
    return Status::Ok();
  });
  volumes_.Write(batch, row.disk_name, row);
}

void VolumeStore::Remove(const std::string& disk_name) {
  affinity_.Check("VolumeStore::Remove");
  uint64_t batch =
      commit_->Write([this, disk_name](sqlite3* db) { return remove_.Bind(1, disk_name).Run(db); });
  volumes_.Write(batch, disk_name, std::nullopt);
}

int64_t VolumeStore::BeginOperation(const std::string& kind, const std::string& volume,
                                    const std::string& args) {
  affinity_.Check("VolumeStore::BeginOperation");
  OperationRow row{.id = next_operation_id_++,
                   .kind = kind,
                   .volume = volume,
                   .args = args,
                   .state = "pending",
                   .outcome = "",
                   .started_ms = wall_ms_()};
  uint64_t batch = commit_->Write([this, row](sqlite3* db) {
    return begin_op_.Bind(1, row.id)
        .Bind(2, row.kind)
        .Bind(3, row.volume)
        .Bind(4, row.args)
        .Bind(5, row.started_ms)
        .Run(db);
  });
  const int64_t id = row.id;
  CountPending(row.kind, 1);
  unfinished_.Write(batch, id, std::move(row));
  PublishOldestPending();
  return id;
}

void VolumeStore::FinishOperation(int64_t id, const std::string& state,
                                  const std::string& outcome) {
  affinity_.Check("VolumeStore::FinishOperation");
  uint64_t batch = commit_->Write([this, id, state, outcome, now = wall_ms_()](sqlite3* db) {
    return finish_op_.Bind(1, id).Bind(2, state).Bind(3, outcome).Bind(4, now).Run(db);
  });
  if (const OperationRow* row = unfinished_.Find(id)) CountPending(row->kind, -1);
  unfinished_.Write(batch, id, std::nullopt);
  PublishOldestPending();
  if (on_finish_) on_finish_();
}

void VolumeStore::CountPending(const std::string& kind, int64_t delta) {
  int64_t& count = pending_by_kind_[kind];
  count += delta;
  metrics::Families().operations_pending.With({kind}).Set(static_cast<double>(count));
}

void VolumeStore::RecountPending() {
  for (auto& [kind, count] : pending_by_kind_)
    count = 0;
  for (const auto& [id, row] : unfinished_.rows())
    ++pending_by_kind_[row.kind];
  for (const auto& [kind, count] : pending_by_kind_)
    metrics::Families().operations_pending.With({kind}).Set(static_cast<double>(count));
  PublishOldestPending();
}

void VolumeStore::PublishOldestPending() const {
  const auto& rows = unfinished_.rows();
  const double start =
      rows.empty() ? 0 : static_cast<double>(rows.begin()->second.started_ms) / 1e3;
  metrics::Families().oldest_pending_operation_start.With({}).Set(start);
}

std::vector<OperationRow> VolumeStore::UnfinishedOperations() const {
  affinity_.Check("VolumeStore::UnfinishedOperations");
  std::vector<OperationRow> rows;
  for (const auto& [id, row] : unfinished_.rows())
    rows.push_back(row);
  return rows;
}

std::optional<OperationRow> VolumeStore::FindUnfinishedOperation(int64_t id) const {
  affinity_.Check("VolumeStore::FindUnfinishedOperation");
  const OperationRow* row = unfinished_.Find(id);
  return row ? std::optional<OperationRow>(*row) : std::nullopt;
}

}  // namespace oxide::store
