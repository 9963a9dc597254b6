#include "store/volume_store.h"

namespace oxide::store {
namespace {

constexpr const char* kVolumeColumns =
    "disk_name, ifnull(volume_id, ''), co_name, size, block_size, state, node_id";

}  // namespace

VolumeStore::VolumeStore(StateDb* db, GroupCommit* commit, std::function<int64_t()> wall_ms)
    : commit_(commit),
      wall_ms_(wall_ms ? std::move(wall_ms) : NowMs),
      journal_(db, commit, wall_ms_),
      listener_(commit, [this](uint64_t batch, bool ok) { volumes_.BatchDone(batch, ok); }) {
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
  Load(h);
}

void VolumeStore::Load(sqlite3* db) {
  load_status_ = ForEachRow(db, std::string("SELECT ") + kVolumeColumns + " FROM volumes",
                            "the volumes", [this](const Statement& volume) {
                              VolumeRow row;
                              ReadColumns(volume, row.disk_name, row.volume_id, row.co_name,
                                          row.size, row.block_size, row.state, row.node_id);
                              std::string key = row.disk_name;
                              volumes_.Load(key, std::move(row));
                            });
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

}  // namespace oxide::store
