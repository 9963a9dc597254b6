// The plugin's durable state: one SQLite database (WAL, synchronous=FULL, exclusive lock,
// versioned schema). Open() runs once at start, where the stores read their tables; then the
// connection (handle()) belongs to the store thread (GroupCommit), and the loop thread keeps only
// Health() and NoteCommitResult().
//
// Opening never changes a file that is not ours: a database with tables but no `meta` row of
// ours is refused before anything is written, and all pending migrations run in ONE transaction
// with their version bumps, so a failure leaves the file as it was. The one step outside that
// transaction is the switch of an older database to auto_vacuum=INCREMENTAL (a VACUUM, which
// SQLite cannot run in a transaction; it is atomic on its own). docs/state-database.md.
#pragma once

#include <sqlite3.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "store/migrations.h"
#include "store/sqlite_handle.h"
#include "util/status.h"

namespace oxide::store {

class StateDb {
 public:
  // Opens or creates the database at `path` (creating its directory), takes an exclusive lock so
  // that no second plugin can share it, checks its integrity and applies pending migrations.
  // Fails with a message naming the file and the reason: corrupt, unwritable, locked, too new.
  // `vfs`: an SQLite VFS name other than the default (tests inject I/O faults this way).
  // `migrations`: the schema to reach; the plugin's own (Migrations()) unless a test passes
  // another list (a test seam: a shortened list makes an old database, a broken step a failure).
  static StatusOr<std::unique_ptr<StateDb>> Open(
      const std::string& path, const char* vfs = nullptr,
      const std::vector<Migration>* migrations = nullptr);
  ~StateDb();
  StateDb(const StateDb&) = delete;
  StateDb& operator=(const StateDb&) = delete;

  // OK when the database can be used: the file is still the one opened and the last commit
  // succeeded. Otherwise FAILED_PRECONDITION with the reason. Reads no table (the connection is
  // the store thread's).
  Status Health();

  int schema_version() const { return schema_version_; }
  static int LatestSchemaVersion();
  sqlite3* handle() { return db_; }
  const std::string& path() const { return path_; }

  // Records the outcome of a commit so Health() reports a failing disk.
  void NoteCommitResult(const Status& status) { last_commit_ = status; }
  const Status& last_commit() const { return last_commit_; }

 private:
  StateDb(std::string path, sqlite3* db, const std::vector<Migration>* migrations)
      : path_(std::move(path)), db_(db), migrations_(migrations) {}
  Status Initialize();
  // Before anything is written: FAILED_PRECONDITION when the file holds tables but no meta row
  // of ours. Sets *empty when it holds no table at all.
  Status RefuseForeign(bool* empty);
  Status Migrate();
  // A database made before auto_vacuum=INCREMENTAL: one VACUUM switches it.
  Status EnableIncrementalVacuum();

  std::string path_;
  sqlite3* db_;
  const std::vector<Migration>* migrations_;
  dev_t device_ = 0;
  ino_t inode_ = 0;
  int schema_version_ = 0;
  Status last_commit_;
};

// Wall time in milliseconds since the epoch: what rows and journal entries are stamped with
// unless a store is given another clock. Any thread.
int64_t NowMs();

}  // namespace oxide::store
