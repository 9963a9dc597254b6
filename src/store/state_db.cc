#include "store/state_db.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "store/migrations.h"

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

StatusOr<std::unique_ptr<StateDb>> StateDb::Open(const std::string& path, const char* vfs) {
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
  std::unique_ptr<StateDb> state(new StateDb(path, db));
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
  // fails at start instead of interleaving writes with us.
  const char* setup =
      "PRAGMA locking_mode=EXCLUSIVE;"
      "PRAGMA journal_mode=WAL;"
      "PRAGMA synchronous=FULL;"
      "PRAGMA foreign_keys=ON;";
  if (sqlite3_exec(db_, setup, nullptr, nullptr, nullptr) != SQLITE_OK) {
    return OpenError(path_, Describe(db_, sqlite3_errcode(db_)));
  }
  // Take the write lock now (locking_mode=EXCLUSIVE keeps it once taken).
  int rc = sqlite3_exec(db_, "BEGIN IMMEDIATE; COMMIT;", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return OpenError(path_, Describe(db_, rc));

  Statement check(db_, "PRAGMA quick_check");
  rc = check.Step();
  if (rc != SQLITE_ROW) return OpenError(path_, Describe(db_, rc));
  if (check.ColumnText(0) != "ok") {
    return OpenError(path_, "integrity check failed (" + check.ColumnText(0) +
                                "); it was left untouched — restore it from a backup");
  }

  Status st = Migrate();
  if (!st.ok()) return st;

  struct stat info {};
  if (stat(path_.c_str(), &info) != 0) {
    return OpenError(path_, std::string("cannot stat: ") + std::strerror(errno));
  }
  device_ = info.st_dev;
  inode_ = info.st_ino;
  return Status::Ok();
}

int StateDb::LatestSchemaVersion() {
  return Migrations().back().version;
}

Status StateDb::Migrate() {
  Statement version(db_, "PRAGMA user_version");
  if (version.Step() != SQLITE_ROW) return OpenError(path_, sqlite3_errmsg(db_));
  schema_version_ = static_cast<int>(version.ColumnInt(0));
  if (schema_version_ > LatestSchemaVersion()) {
    return OpenError(path_, "schema version " + std::to_string(schema_version_) +
                                " is newer than this plugin understands (" +
                                std::to_string(LatestSchemaVersion()) +
                                "); run the newer plugin or restore a backup");
  }
  for (const Migration& m : Migrations()) {
    if (m.version <= schema_version_) continue;
    std::string sql = std::string("BEGIN IMMEDIATE;") + m.sql +
                      "PRAGMA user_version=" + std::to_string(m.version) + ";COMMIT;";
    Status st = Exec(db_, sql);
    if (!st.ok()) {
      (void)Exec(db_, "ROLLBACK");  // the start fails with the migration's error either way
      return OpenError(path_, "migration to schema " + std::to_string(m.version) + " (" +
                                  m.description + ") failed: " + st.message());
    }
    schema_version_ = m.version;
  }
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

}  // namespace oxide::store
