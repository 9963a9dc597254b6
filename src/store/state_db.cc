#include "store/state_db.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "store/migrations.h"
#include "util/log.h"

namespace oxide::store {
namespace {

Status OpenError(const std::string& path, const std::string& why) {
  return FailedPrecondition("state database " + path + ": " + why);
}

std::string Describe(sqlite3* db, int rc) {
  switch (rc) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "locked by another process (is another oxide-csi-plugin using it?)";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return "corrupt or not an SQLite database; it was left untouched — restore it from a backup "
             "or move it away";
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return std::string("cannot be opened for writing (") + sqlite3_errmsg(db) + ")";
    default:
      return sqlite3_errmsg(db);
  }
}

// The database holds the names of every volume and node: readable by its owner only. SQLite gives
// the -wal and -shm files the database file's mode, so the database is made 0600 before SQLite
// opens it, and files left more open by an older plugin are narrowed.
Status MakeOwnerOnly(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && errno != EEXIST) {
    return OpenError(path, std::string("cannot be created: ") + std::strerror(errno));
  }
  if (fd >= 0) ::close(fd);
  for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
    struct stat st {};
    if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
      if (::chmod(file.c_str(), 0600) != 0) {
        return OpenError(path, "cannot make " + file + " owner-only: " + std::strerror(errno));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<StateDb>> StateDb::Open(const std::string& path, const char* vfs,
                                                 const std::vector<Migration>* migrations) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::exists(parent, ec)) {
    std::filesystem::create_directories(parent, ec);
    if (ec)
      return OpenError(path, "cannot create directory " + parent.string() + ": " + ec.message());
    std::filesystem::permissions(parent, std::filesystem::perms::owner_all, ec);
  }
  if (std::filesystem::is_directory(path, ec)) return OpenError(path, "is a directory");
  if (Status owner_only = MakeOwnerOnly(path); !owner_only.ok()) return owner_only;

  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, vfs);
  std::unique_ptr<StateDb> state(new StateDb(path, db, migrations ? migrations : &Migrations()));
  if (rc != SQLITE_OK) return OpenError(path, Describe(db, rc));
  Status st = state->Initialize();
  if (!st.ok()) return st;
  return state;
}

StateDb::~StateDb() {
  sqlite3_close_v2(db_);
}

Status StateDb::Initialize() {
  sqlite3_extended_result_codes(db_, 0);
  // An exclusive lock held for the whole life of the process: a second plugin on the same file
  // fails at start instead of interleaving writes with us. Set first: nothing here writes yet.
  if (sqlite3_exec(db_, "PRAGMA locking_mode=EXCLUSIVE", nullptr, nullptr, nullptr) != SQLITE_OK) {
    return OpenError(path_, Describe(db_, sqlite3_errcode(db_)));
  }
  // Before any change to the file (even journal_mode=WAL rewrites its header).
  bool empty = false;
  if (Status ours = RefuseForeign(&empty); !ours.ok()) return ours;
  // A new database gets incremental vacuum before its first table, so it never needs a VACUUM.
  const char* setup =
      "PRAGMA journal_mode=WAL;"
      "PRAGMA synchronous=FULL;"
      "PRAGMA foreign_keys=ON;"
      // The WAL stays small: SQLite checkpoints it after 128 pages (512 KiB; its default, 1,000
      // pages, let it reach 4 MB), and truncates it back to 512 KiB whenever it restarts it.
      "PRAGMA wal_autocheckpoint=128;"
      "PRAGMA journal_size_limit=524288;";
  if ((empty && sqlite3_exec(db_, "PRAGMA auto_vacuum=INCREMENTAL", nullptr, nullptr, nullptr) !=
                    SQLITE_OK) ||
      sqlite3_exec(db_, setup, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return OpenError(path_, Describe(db_, sqlite3_errcode(db_)));
  }
  // Take the write lock now (locking_mode=EXCLUSIVE keeps it once taken).
  int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE; COMMIT;", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return OpenError(path_, Describe(db_, rc));

  {
    Statement check(db_, "PRAGMA quick_check");  // finished here: VACUUM refuses open statements
    rc = check.Step();
    if (rc != SQLITE_ROW) return OpenError(path_, Describe(db_, rc));
    if (check.ColumnText(0) != "ok") {
      return OpenError(path_, "integrity check failed (" + check.ColumnText(0) +
                                  "); it was left untouched — restore it from a backup");
    }
  }

  Status st = Migrate();
  if (!st.ok()) return st;
  if (Status vacuum = EnableIncrementalVacuum(); !vacuum.ok()) {
    // The plugin works without it (freed pages are reused, only not given back); the switch is
    // tried again at the next start.
    log::Warn("state database keeps its file size: " + vacuum.message(), {{"state_db", path_}});
  }

  struct stat info {};
  if (stat(path_.c_str(), &info) != 0) {
    return OpenError(path_, std::string("cannot stat: ") + std::strerror(errno));
  }
  device_ = info.st_dev;
  inode_ = info.st_ino;
  return Status::Ok();
}

Status StateDb::RefuseForeign(bool* empty) {
  Statement tables(db_,
                   "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
                   "'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  if (!tables.valid()) return OpenError(path_, Describe(db_, sqlite3_errcode(db_)));
  std::vector<std::string> names;
  int rc = SQLITE_ROW;
  while ((rc = tables.Step()) == SQLITE_ROW)
    names.push_back(tables.ColumnText(0));
  if (rc != SQLITE_DONE) return OpenError(path_, Describe(db_, rc));
  *empty = names.empty();
  if (names.empty()) return Status::Ok();
  std::string listed;
  bool has_meta = false;
  for (const std::string& name : names) {
    listed += (listed.empty() ? "" : ", ") + name;
    has_meta = has_meta || name == "meta";
  }
  if (has_meta) {
    Statement ours(db_,
                   "SELECT count(*) FROM meta WHERE key = 'created_by' AND "
                   "value = 'oxide-csi-plugin'");
    if (ours.valid() && ours.Step() == SQLITE_ROW && ours.ColumnInt(0) > 0) return Status::Ok();
  }
  return OpenError(path_, "is not an oxide-csi-plugin state database (it has the tables " + listed +
                              " and no meta row created_by=oxide-csi-plugin); it was left "
                              "untouched — point --state-db at a new file");
}

int StateDb::LatestSchemaVersion() {
  return Migrations().back().version;
}

Status StateDb::Migrate() {
  Statement version(db_, "PRAGMA user_version");
  if (version.Step() != SQLITE_ROW) return OpenError(path_, sqlite3_errmsg(db_));
  const int found = static_cast<int>(version.ColumnInt(0));
  const int latest = migrations_->back().version;
  schema_version_ = found;
  if (found > latest) {
    return OpenError(path_, "schema version " + std::to_string(found) +
                                " is newer than this plugin understands (" +
                                std::to_string(latest) +
                                "); run the newer plugin or restore a backup");
  }
  if (found == latest) return Status::Ok();
  // Every pending migration and its version bump in one transaction: a failure at any step
  // undoes the earlier ones too, so the file is exactly as it was before the start.
  if (Status begun = Exec(db_, "BEGIN IMMEDIATE"); !begun.ok()) {
    return OpenError(path_, "cannot start the migration: " + begun.message());
  }
  std::vector<const Migration*> applied;
  int at = found;
  for (const Migration& m : *migrations_) {
    if (m.version <= found) continue;
    Status st =
        Exec(db_, std::string(m.sql) + ";PRAGMA user_version=" + std::to_string(m.version) + ";");
    if (!st.ok()) {
      (void)Exec(db_, "ROLLBACK");  // the start fails with the migration's error either way
      return OpenError(path_, "migration from schema " + std::to_string(at) + " to " +
                                  std::to_string(m.version) + " (" + m.description + ") failed: " +
                                  st.message() + "; the database was left as it was, at schema " +
                                  std::to_string(found));
    }
    applied.push_back(&m);
    at = m.version;
  }
  if (Status committed = Exec(db_, "COMMIT"); !committed.ok()) {
    (void)Exec(db_, "ROLLBACK");
    return OpenError(path_, "migration from schema " + std::to_string(found) + " to " +
                                std::to_string(at) + " could not be committed: " +
                                committed.message() + "; the database was left as it was");
  }
  int from = found;
  for (const Migration* m : applied) {
    log::Info("migrated state database from schema " + std::to_string(from) + " to " +
                  std::to_string(m->version),
              {{"state_db", path_}, {"migration", m->description}});
    from = m->version;
  }
  schema_version_ = at;
  return Status::Ok();
}

Status StateDb::EnableIncrementalVacuum() {
  Statement mode(db_, "PRAGMA auto_vacuum");
  if (mode.Step() != SQLITE_ROW) return Unavailable(sqlite3_errmsg(db_));
  constexpr int64_t kIncremental = 2;
  if (mode.ColumnInt(0) == kIncremental) return Status::Ok();
  mode.Reset();
  // VACUUM rebuilds the file in one transaction of its own (it cannot run inside another): a
  // crash or a failure leaves the database as it was, with the old auto_vacuum, and the next
  // start tries again.
  Status st = Exec(db_, "PRAGMA auto_vacuum=INCREMENTAL; VACUUM;");
  if (!st.ok()) {
    return Unavailable("switching to auto_vacuum=INCREMENTAL (a one-time VACUUM) failed: " +
                       st.message());
  }
  log::Info("state database switched to incremental vacuum (a one-time VACUUM)",
            {{"state_db", path_}});
  return Status::Ok();
}

Status StateDb::Health() {
  struct stat info {};
  if (stat(path_.c_str(), &info) != 0 || info.st_dev != device_ || info.st_ino != inode_) {
    return FailedPrecondition("state database " + path_ +
                              " was removed or replaced while the plugin runs; restart the plugin");
  }
  if (!last_commit_.ok()) {
    return FailedPrecondition("state database " + path_ +
                              ": the last commit failed: " + last_commit_.message());
  }
  return Status::Ok();
}

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace oxide::store
