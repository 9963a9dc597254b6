#include "store/file_compaction.h"

#include <algorithm>
#include <string>

#include "store/sqlite_handle.h"
#include "util/log.h"

namespace oxide::store {
namespace {

int64_t PragmaInt(sqlite3* db, const char* pragma) {
  Statement statement(db, std::string("PRAGMA ") + pragma);
  return statement.Step() == SQLITE_ROW ? statement.ColumnInt(0) : -1;
}

}  // namespace

CompactionResult CompactFile(sqlite3* db, const CompactionLimits& limits) {
  CompactionResult result;
  const int64_t free_pages = PragmaInt(db, "freelist_count");
  if (free_pages > limits.keep_free_pages) {
    const int64_t pages = std::min(free_pages - limits.keep_free_pages / 2, limits.pages_per_call);
    // sqlite3_exec runs the pragma to its end (a prepared statement would free one page a step).
    Status vacuumed = Exec(db, "PRAGMA incremental_vacuum(" + std::to_string(pages) + ")");
    if (vacuumed.ok()) {
      result.pages_freed = free_pages - PragmaInt(db, "freelist_count");
    } else {
      log::Warn("state database: giving free pages back failed (tried again after the next prune)",
                {{"error", vacuumed.message()}});
    }
  }
  // Copies the WAL into the database and truncates it to zero bytes: the WAL never holds more
  // than what was written since the last prune step (or SQLite's own 1000-page checkpoint).
  Status checkpointed = Exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  result.wal_truncated = checkpointed.ok();
  if (!checkpointed.ok()) {
    log::Warn("state database: WAL checkpoint failed (tried again after the next prune)",
              {{"error", checkpointed.message()}});
  }
  result.file_bytes = PragmaInt(db, "page_count") * PragmaInt(db, "page_size");
  return result;
}

}  // namespace oxide::store
