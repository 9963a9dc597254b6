#include "store/node_volume_store.h"

#include <ctime>

namespace oxide::store {
namespace {

constexpr const char* kStagingColumns =
    "volume_id, staging_path, state, capability, block, fs_type, serial, device_name, "
    "device_number, format_uuid, encrypted";
constexpr const char* kPublicationColumns =
    "target_path, volume_id, state, staging_path, capability, readonly";

template <typename Row>
std::vector<Row> Values(const std::map<std::string, Row>& rows) {
  std::vector<Row> values;
  values.reserve(rows.size());
  for (const auto& [key, row] : rows)
    values.push_back(row);
  return values;
}

}  // namespace

NodeVolumeStore::NodeVolumeStore(StateDb* db, GroupCommit* commit)
    : commit_(commit), listener_(commit, [this](uint64_t batch, bool ok) {
        stagings_.BatchDone(batch, ok);
        publications_.BatchDone(batch, ok);
      }) {
  sqlite3* h = db->handle();
  put_staging_ =
      Statement(h, std::string("INSERT OR REPLACE INTO node_stagings (") + kStagingColumns +
                       ", updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  delete_staging_ = Statement(h, "DELETE FROM node_stagings WHERE volume_id = ?1");
  put_publication_ =
      Statement(h, std::string("INSERT OR REPLACE INTO node_publications (") + kPublicationColumns +
                       ", updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  delete_publication_ = Statement(h, "DELETE FROM node_publications WHERE target_path = ?1");
  Load(h);
}

void NodeVolumeStore::Load(sqlite3* db) {
  load_status_ =
      ForEachRow(db, std::string("SELECT ") + kStagingColumns + " FROM node_stagings",
                 "the node stagings", [this](const Statement& staging) {
                   StagingRow row;
                   ReadColumns(staging, row.volume_id, row.staging_path, row.state, row.capability,
                               row.block, row.fs_type, row.serial, row.device_name,
                               row.device_number, row.format_uuid, row.encrypted);
                   std::string key = row.volume_id;
                   stagings_.Load(key, std::move(row));
                 });
  if (!load_status_.ok()) return;
  load_status_ =
      ForEachRow(db, std::string("SELECT ") + kPublicationColumns + " FROM node_publications",
                 "the node publications", [this](const Statement& publication) {
                   PublicationRow row;
                   ReadColumns(publication, row.target_path, row.volume_id, row.state,
                               row.staging_path, row.capability, row.readonly);
                   std::string key = row.target_path;
                   publications_.Load(key, std::move(row));
                 });
}

std::optional<StagingRow> NodeVolumeStore::GetStaging(const std::string& volume_id) const {
  affinity_.Check("NodeVolumeStore::GetStaging");
  const StagingRow* row = stagings_.Find(volume_id);
  return row ? std::optional<StagingRow>(*row) : std::nullopt;
}

std::vector<StagingRow> NodeVolumeStore::ListStagings() const {
  affinity_.Check("NodeVolumeStore::ListStagings");
  return Values(stagings_.rows());
}

void NodeVolumeStore::PutStaging(const StagingRow& row) {
  affinity_.Check("NodeVolumeStore::PutStaging");
  uint64_t batch = commit_->Write([this, row, now = int64_t{std::time(nullptr)}](sqlite3* db) {
    return put_staging_.Bind(1, row.volume_id)
        .Bind(2, row.staging_path)
        .Bind(3, row.state)
        .Bind(4, row.capability)
        .Bind(5, int64_t{row.block ? 1 : 0})
        .Bind(6, row.fs_type)
        .Bind(7, row.serial)
        .Bind(8, row.device_name)
        .Bind(9, row.device_number)
        .Bind(10, row.format_uuid)
        .Bind(11, int64_t{row.encrypted ? 1 : 0})
        .Bind(12, now)
        .Run(db);
  });
  stagings_.Write(batch, row.volume_id, row);
}

void NodeVolumeStore::DeleteStaging(const std::string& volume_id) {
  affinity_.Check("NodeVolumeStore::DeleteStaging");
  uint64_t batch = commit_->Write(
      [this, volume_id](sqlite3* db) { return delete_staging_.Bind(1, volume_id).Run(db); });
  stagings_.Write(batch, volume_id, std::nullopt);
}

std::optional<PublicationRow> NodeVolumeStore::GetPublication(
    const std::string& target_path) const {
  affinity_.Check("NodeVolumeStore::GetPublication");
  const PublicationRow* row = publications_.Find(target_path);
  return row ? std::optional<PublicationRow>(*row) : std::nullopt;
}

std::vector<PublicationRow> NodeVolumeStore::ListPublications() const {
  affinity_.Check("NodeVolumeStore::ListPublications");
  return Values(publications_.rows());
}

std::vector<PublicationRow> NodeVolumeStore::PublicationsOf(const std::string& volume_id) const {
  affinity_.Check("NodeVolumeStore::PublicationsOf");
  std::vector<PublicationRow> rows;
  for (const auto& [target, row] : publications_.rows()) {
    if (row.volume_id == volume_id) rows.push_back(row);
  }
  return rows;
}

void NodeVolumeStore::PutPublication(const PublicationRow& row) {
  affinity_.Check("NodeVolumeStore::PutPublication");
  uint64_t batch = commit_->Write([this, row, now = int64_t{std::time(nullptr)}](sqlite3* db) {
    return put_publication_.Bind(1, row.target_path)
        .Bind(2, row.volume_id)
        .Bind(3, row.state)
        .Bind(4, row.staging_path)
        .Bind(5, row.capability)
        .Bind(6, int64_t{row.readonly ? 1 : 0})
        .Bind(7, now)
        .Run(db);
  });
  publications_.Write(batch, row.target_path, row);
}

void NodeVolumeStore::DeletePublication(const std::string& target_path) {
  affinity_.Check("NodeVolumeStore::DeletePublication");
  uint64_t batch = commit_->Write([this, target_path](sqlite3* db) {
    return delete_publication_.Bind(1, target_path).Run(db);
  });
  publications_.Write(batch, target_path, std::nullopt);
}

}  // namespace oxide::store
