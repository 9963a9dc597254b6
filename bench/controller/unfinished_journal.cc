// The state database rewrite for the restart figure, on the schema of src/store/migrations.cc
// (tables `operations` and `volumes`).
#include "unfinished_journal.h"

#include <sqlite3.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "engine/disk_naming.h"

namespace oxide::bench {
namespace {

// Runs `sql` (no result rows); false with `error` set on failure.
bool Exec(sqlite3* db, const std::string& sql, std::string* error) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return true;
  *error = sql + ": " + (message != nullptr ? message : sqlite3_errmsg(db));
  sqlite3_free(message);
  return false;
}

// The first column of the first row of `sql` as an integer (-1 when there is none).
int64_t QueryInt(sqlite3* db, const std::string& sql, std::string* error) {
  sqlite3_stmt* statement = nullptr;
  int64_t value = -1;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
    *error = sql + ": " + sqlite3_errmsg(db);
    return value;
  }
  if (sqlite3_step(statement) == SQLITE_ROW && sqlite3_column_type(statement, 0) != SQLITE_NULL)
    value = sqlite3_column_int64(statement, 0);
  sqlite3_finalize(statement);
  return value;
}

// Adds a pending create of `co_name` as VolumeEngine::Create journals one, and its volume row.
bool AddPendingCreate(sqlite3* db, sqlite3_stmt* add_op, sqlite3_stmt* add_volume,
                      const std::string& co_name, int64_t size, int64_t block_size, int64_t now_ms,
                      std::string* error) {
  const std::string disk_name = engine::DiskNameFor(co_name);
  const std::string args =
      nlohmann::json{{"co_name", co_name}, {"size", size}, {"block_size", block_size}}.dump();
  sqlite3_reset(add_op);
  sqlite3_bind_text(add_op, 1, disk_name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(add_op, 2, args.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(add_op, 3, now_ms);
  sqlite3_reset(add_volume);
  sqlite3_bind_text(add_volume, 1, disk_name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(add_volume, 2, co_name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(add_volume, 3, size);
  sqlite3_bind_int64(add_volume, 4, block_size);
  sqlite3_bind_int64(add_volume, 5, now_ms);
  if (sqlite3_step(add_op) != SQLITE_DONE || sqlite3_step(add_volume) != SQLITE_DONE) {
    *error = "adding a pending create of " + co_name + ": " + sqlite3_errmsg(db);
    return false;
  }
  return true;
}

bool Rewrite(sqlite3* db, const std::vector<std::string>& never_made, UnfinishedCreates* counts,
             std::string* error) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  // The volumes of finished creates: back to the row a create writes before Oxide answers.
  if (!Exec(db,
            "UPDATE volumes SET state = 'CREATING', volume_id = NULL, node_id = '' WHERE disk_name "
            "IN (SELECT volume FROM operations WHERE kind = 'create' AND state = 'done')",
            error) ||
      !Exec(db,
            "UPDATE operations SET state = 'pending', outcome = '', finished_ms = NULL WHERE kind "
            "= 'create' AND state = 'done'",
            error)) {
    return false;
  }
  counts->reopened = sqlite3_changes(db);
  // Sizes as the plugin recorded them for the volumes made (1 GiB, 4096 when there are none).
  int64_t size = QueryInt(db, "SELECT size FROM volumes LIMIT 1", error);
  int64_t block_size = QueryInt(db, "SELECT block_size FROM volumes LIMIT 1", error);
  if (!error->empty()) return false;
  if (size <= 0) size = int64_t{1} << 30;
  if (block_size <= 0) block_size = 4096;
  sqlite3_stmt* add_op = nullptr;
  sqlite3_stmt* add_volume = nullptr;
  bool ok =
      sqlite3_prepare_v2(db,
                         "INSERT INTO operations(kind, volume, args, state, outcome, started_ms) "
                         "VALUES ('create', ?1, ?2, 'pending', '', ?3)",
                         -1, &add_op, nullptr) == SQLITE_OK &&
      sqlite3_prepare_v2(db,
                         "INSERT INTO volumes(disk_name, volume_id, co_name, size, block_size, "
                         "state, node_id, updated_ms) VALUES (?1, NULL, ?2, ?3, ?4, 'CREATING', "
                         "'', ?5)",
                         -1, &add_volume, nullptr) == SQLITE_OK;
  if (!ok) *error = std::string("preparing the inserts: ") + sqlite3_errmsg(db);
  for (size_t i = 0; ok && i < never_made.size(); ++i) {
    ok = AddPendingCreate(db, add_op, add_volume, never_made[i], size, block_size, now_ms, error);
    if (ok) ++counts->added;
  }
  sqlite3_finalize(add_op);
  sqlite3_finalize(add_volume);
  return ok;
}

}  // namespace

bool MakeCreatesUnfinished(const std::string& db_path, const std::vector<std::string>& never_made,
                           UnfinishedCreates* counts, std::string* error) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    *error = "cannot open " + db_path + ": " + sqlite3_errmsg(db);
    sqlite3_close(db);
    return false;
  }
  sqlite3_busy_timeout(db, 5000);
  bool ok = Exec(db, "BEGIN IMMEDIATE", error);
  if (ok) ok = Rewrite(db, never_made, counts, error);
  ok = ok && Exec(db, "COMMIT", error);
  if (!ok) {
    std::string ignored;
    Exec(db, "ROLLBACK", &ignored);
  }
  if (ok) {
    counts->pending = static_cast<int>(
        QueryInt(db, "SELECT count(*) FROM operations WHERE state = 'pending'", error));
    ok = error->empty();
  }
  sqlite3_close(db);
  return ok;
}

}  // namespace oxide::bench
