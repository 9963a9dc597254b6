// Keeps the state database's files small: gives free pages back to the file system
// (PRAGMA incremental_vacuum, the database uses auto_vacuum=INCREMENTAL) and truncates the WAL
// (PRAGMA wal_checkpoint(TRUNCATE)). Runs on the store thread, outside any transaction, as idle
// work (GroupCommit::RunWhenIdle) after the journal pruner freed rows; each call does a bounded
// amount, so a commit queued behind it waits little. Store thread only.
#pragma once

#include <sqlite3.h>

#include <cstdint>

namespace oxide::store {

struct CompactionLimits {
  // Free pages kept for reuse (inserts take them before growing the file): not worth a vacuum.
  int64_t keep_free_pages = 64;
  // Pages given back per call at most (4 KiB each): bounds the time a queued commit waits.
  int64_t pages_per_call = 512;
};

struct CompactionResult {
  int64_t pages_freed = 0;  // pages removed from the end of the file
  int64_t file_bytes = 0;   // page_count * page_size afterwards
  bool wal_truncated = false;
};

// One bounded round of compaction on `db` (not inside a transaction). Failures are logged as
// warnings and leave the database correct (each step is its own transaction).
CompactionResult CompactFile(sqlite3* db, const CompactionLimits& limits = {});

}  // namespace oxide::store
