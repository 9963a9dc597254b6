#include "store/node_volume_store.h"

#include <ctime>

namespace oxide::store {
namespace {

Status SqlError(StateDb* db, const std::string& what) {
  Status status = Internal("state database: " + what + ": " + sqlite3_errmsg(db->handle()));
  return status;
}

void BindAll(Statement& statement, const std::vector<std::string>& values) {
  for (size_t i = 0; i < values.size(); ++i)
    statement.Bind(static_cast<int>(i) + 1, values[i]);
}

constexpr const char* kStagingColumns =
    "volume_id, staging_path, state, capability, block, fs_type, serial, device_name, "
    "device_number";
constexpr const char* kPublicationColumns =
    "target_path, volume_id, state, staging_path, capability, readonly";

}  // namespace

Status NodeVolumeStore::Write(const std::string& sql, const std::vector<std::string>& values) {
  Statement statement(db_->handle(), sql);
  if (!statement.valid()) return SqlError(db_, "prepare");
  BindAll(statement, values);
  Status result = statement.Step() == SQLITE_DONE ? Status::Ok() : SqlError(db_, "write");
  if (result.ok() && commit_ != nullptr && sqlite3_get_autocommit(db_->handle()) == 0) {
    commit_->Flush();
    return db_->last_commit();
  }
  db_->NoteCommitResult(result);
  return result;
}

StatusOr<std::vector<StagingRow>> NodeVolumeStore::QueryStagings(
    const std::string& where, const std::vector<std::string>& values) {
  Statement statement(db_->handle(),
                      std::string("SELECT ") + kStagingColumns + " FROM node_stagings " + where);
  if (!statement.valid()) return SqlError(db_, "prepare");
  BindAll(statement, values);
  std::vector<StagingRow> rows;
  int rc = 0;
  while ((rc = statement.Step()) == SQLITE_ROW) {
    rows.push_back({.volume_id = statement.ColumnText(0),
                    .staging_path = statement.ColumnText(1),
                    .state = statement.ColumnText(2),
                    .capability = statement.ColumnText(3),
                    .block = statement.ColumnInt(4) != 0,
                    .fs_type = statement.ColumnText(5),
                    .serial = statement.ColumnText(6),
                    .device_name = statement.ColumnText(7),
                    .device_number = statement.ColumnText(8)});
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "read");
  return rows;
}

StatusOr<std::vector<PublicationRow>> NodeVolumeStore::QueryPublications(
    const std::string& where, const std::vector<std::string>& values) {
  Statement statement(db_->handle(), std::string("SELECT ") + kPublicationColumns +
                                         " FROM node_publications " + where);
  if (!statement.valid()) return SqlError(db_, "prepare");
  BindAll(statement, values);
  std::vector<PublicationRow> rows;
  int rc = 0;
  while ((rc = statement.Step()) == SQLITE_ROW) {
    rows.push_back({.target_path = statement.ColumnText(0),
                    .volume_id = statement.ColumnText(1),
                    .state = statement.ColumnText(2),
                    .staging_path = statement.ColumnText(3),
                    .capability = statement.ColumnText(4),
                    .readonly = statement.ColumnInt(5) != 0});
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "read");
  return rows;
}

StatusOr<std::optional<StagingRow>> NodeVolumeStore::GetStaging(const std::string& volume_id) {
  auto rows = QueryStagings("WHERE volume_id = ?1", {volume_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<StagingRow>();
  return std::optional<StagingRow>(rows->front());
}

StatusOr<std::vector<StagingRow>> NodeVolumeStore::ListStagings() {
  return QueryStagings("ORDER BY volume_id", {});
}

Status NodeVolumeStore::PutStaging(const StagingRow& row) {
  return Write(std::string("INSERT OR REPLACE INTO node_stagings (") + kStagingColumns +
                   ", updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
               {row.volume_id, row.staging_path, row.state, row.capability, row.block ? "1" : "0",
                row.fs_type, row.serial, row.device_name, row.device_number,
                std::to_string(std::time(nullptr))});
}

Status NodeVolumeStore::DeleteStaging(const std::string& volume_id) {
  return Write("DELETE FROM node_stagings WHERE volume_id = ?1", {volume_id});
}

StatusOr<std::optional<PublicationRow>> NodeVolumeStore::GetPublication(
    const std::string& target_path) {
  auto rows = QueryPublications("WHERE target_path = ?1", {target_path});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<PublicationRow>();
  return std::optional<PublicationRow>(rows->front());
}

StatusOr<std::vector<PublicationRow>> NodeVolumeStore::ListPublications() {
  return QueryPublications("ORDER BY target_path", {});
}

StatusOr<std::vector<PublicationRow>> NodeVolumeStore::PublicationsOf(
    const std::string& volume_id) {
  return QueryPublications("WHERE volume_id = ?1 ORDER BY target_path", {volume_id});
}

Status NodeVolumeStore::PutPublication(const PublicationRow& row) {
  return Write(std::string("INSERT OR REPLACE INTO node_publications (") + kPublicationColumns +
                   ", updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
               {row.target_path, row.volume_id, row.state, row.staging_path, row.capability,
                row.readonly ? "1" : "0", std::to_string(std::time(nullptr))});
}

Status NodeVolumeStore::DeletePublication(const std::string& target_path) {
  return Write("DELETE FROM node_publications WHERE target_path = ?1", {target_path});
}

}  // namespace oxide::store
