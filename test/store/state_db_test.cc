// The state database on real SQLite files: creation, migrations (atomic, logged, refusing a
// database that is not ours), incremental vacuum, exclusive lock, corruption, a schema from the
// future, and health.
#include "store/state_db.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/log_capture.h"
#include "support/temp_dir.h"
#include "util/log.h"

namespace oxide::store {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

std::string Pragma(StateDb& db, const std::string& pragma) {
  Statement statement(db.handle(), "PRAGMA " + pragma);
  EXPECT_EQ(statement.Step(), SQLITE_ROW);
  return statement.ColumnText(0);
}

TEST(StateDb, CreatesDirectoryAndLatestSchemaInWalMode) {
  TempDir dir;
  std::string path = dir.File("nested/dir/state.db");
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->schema_version(), StateDb::LatestSchemaVersion());
  EXPECT_EQ(Pragma(**db, "journal_mode"), "wal");
  EXPECT_EQ(Pragma(**db, "user_version"), std::to_string(StateDb::LatestSchemaVersion()));
  EXPECT_TRUE((*db)->Health().ok());
  struct stat info {};
  ASSERT_EQ(stat(dir.File("nested/dir").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
}

mode_t ModeOf(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

TEST(StateDb, TheDatabaseAndItsWalAreOwnerOnly) {
  TempDir dir;
  std::string path = dir.File("state.db");
  {
    auto db = StateDb::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    // No -shm file: in exclusive locking mode SQLite keeps the WAL index in memory.
    for (const std::string& file : {path, path + "-wal"}) {
      EXPECT_EQ(ModeOf(file), 0600u) << file;
    }
    EXPECT_NE(access((path + "-shm").c_str(), F_OK), 0);
  }
  // Left readable by others (an older plugin, a copy by hand): narrowed at the next open.
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(ModeOf(path), 0600u);
}

TEST(StateDb, ReopenKeepsDataAndDoesNotReapplyMigrations) {
  TempDir dir;
  std::string path = dir.File("state.db");
  {
    auto db = StateDb::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Exec((*db)->handle(), "INSERT INTO meta VALUES ('k', 'v')").ok());
  }
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Statement read((*db)->handle(), "SELECT value FROM meta WHERE key = 'k'");
  ASSERT_EQ(read.Step(), SQLITE_ROW);
  EXPECT_EQ(read.ColumnText(0), "v");
}

TEST(StateDb, ASecondOpenerIsRefusedWhileTheFirstHoldsIt) {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto first = StateDb::Open(path);
  ASSERT_TRUE(first.ok());
  auto second = StateDb::Open(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("locked by another process"), std::string::npos)
      << second.status().message();
  EXPECT_TRUE((*first)->Health().ok());
}

TEST(StateDb, ACorruptFileIsRefusedAndLeftUntouched) {
  TempDir dir;
  std::string path = dir.File("state.db");
  std::string garbage(8192, 'x');
  WriteFile(path, garbage);
  auto db = StateDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("corrupt"), std::string::npos) << db.status().message();
  EXPECT_NE(db.status().message().find(path), std::string::npos);
  EXPECT_EQ(ReadFile(path), garbage);
}

TEST(StateDb, ASchemaFromANewerPluginIsRefused) {
  TempDir dir;
  std::string path = dir.File("state.db");
  {
    auto db = StateDb::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Exec((*db)->handle(), "PRAGMA user_version = 999").ok());
  }
  auto db = StateDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("newer than this plugin understands"), std::string::npos)
      << db.status().message();
}

TEST(StateDb, UnusablePathsAreRefused) {
  TempDir dir;
  auto directory = StateDb::Open(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("is a directory"), std::string::npos);

  WriteFile(dir.File("file"), "x");
  auto under_a_file = StateDb::Open(dir.File("file/state.db"));
  ASSERT_FALSE(under_a_file.ok());
  EXPECT_NE(under_a_file.status().message().find(dir.File("file/state.db")), std::string::npos);
}

TEST(StateDb, HealthFailsWhenTheFileIsRemovedOrACommitFailed) {
  TempDir dir;
  std::string path = dir.File("state.db");
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok());
  (*db)->NoteCommitResult(Internal("disk I/O error"));
  Status failing = (*db)->Health();
  EXPECT_EQ(failing.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(failing.message().find("disk I/O error"), std::string::npos);
  (*db)->NoteCommitResult(Status::Ok());
  EXPECT_TRUE((*db)->Health().ok());

  ASSERT_EQ(unlink(path.c_str()), 0);
  Status removed = (*db)->Health();
  EXPECT_EQ(removed.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(removed.message().find("removed or replaced"), std::string::npos);
}

// The lines of a captured log that contain `text`.
int LinesWith(const oxide::testing::LogCapture& log, const std::string& text) {
  const std::vector<std::string> lines = log.Lines();
  return static_cast<int>(std::count_if(lines.begin(), lines.end(), [&](const std::string& line) {
    return line.find(text) != std::string::npos;
  }));
}

// A database as an older plugin left it: the schema up to `version`, made with plain SQLite
// (no auto_vacuum, as before this plugin set it), in WAL mode, with one volume row when the
// schema has the table. Closed, so its WAL is folded back into the file.
void MakeOldDatabase(const std::string& path, int version) {
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_TRUE(Exec(raw, "PRAGMA journal_mode=WAL").ok());
  for (const Migration& m : Migrations()) {
    if (m.version > version) break;
    ASSERT_TRUE(
        Exec(raw, std::string(m.sql) + ";PRAGMA user_version=" + std::to_string(m.version)).ok());
  }
  if (version >= 2) {
    ASSERT_TRUE(Exec(raw,
                     "INSERT INTO volumes VALUES ('disk-a', 'id-a', 'pvc-a', 1073741824, 4096, "
                     "'ready', '', 1)")
                    .ok());
  }
  ASSERT_EQ(sqlite3_close(raw), SQLITE_OK);
}

bool Exists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

TEST(StateDbMigrations, AFreshDatabaseLogsEachMigrationAndUsesIncrementalVacuum) {
  TempDir dir;
  std::string path = dir.File("state.db");
  oxide::testing::LogCapture log;
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (int from = 0; from < StateDb::LatestSchemaVersion(); ++from) {
    EXPECT_EQ(LinesWith(log, "migrated state database from schema " + std::to_string(from) +
                                 " to " + std::to_string(from + 1)),
              1)
        << from;
  }
  EXPECT_EQ(LinesWith(log, "migrated state database"), StateDb::LatestSchemaVersion());
  EXPECT_EQ(Pragma(**db, "auto_vacuum"), "2") << "INCREMENTAL, set before the first table";
  EXPECT_EQ(LinesWith(log, "switched to incremental vacuum"), 0) << "a new file needs no VACUUM";
}

TEST(StateDbMigrations, AVersionTwoDatabaseIsUpgradedWithOneLineAStepAndIncrementalVacuum) {
  TempDir dir;
  std::string path = dir.File("state.db");
  MakeOldDatabase(path, 2);
  oxide::testing::LogCapture log;
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->schema_version(), StateDb::LatestSchemaVersion());
  EXPECT_EQ(LinesWith(log, "migrated state database"), StateDb::LatestSchemaVersion() - 2);
  for (int from = 2; from < StateDb::LatestSchemaVersion(); ++from) {
    EXPECT_EQ(LinesWith(log, "migrated state database from schema " + std::to_string(from) +
                                 " to " + std::to_string(from + 1)),
              1)
        << from;
  }
  EXPECT_EQ(Pragma(**db, "auto_vacuum"), "2");
  EXPECT_EQ(LinesWith(log, "switched to incremental vacuum"), 1);
  {
    Statement kept((*db)->handle(), "SELECT co_name FROM volumes WHERE disk_name = 'disk-a'");
    ASSERT_EQ(kept.Step(), SQLITE_ROW);
    EXPECT_EQ(kept.ColumnText(0), "pvc-a");
  }
  // Once switched, a later start neither migrates nor vacuums again.
  db->reset();
  oxide::testing::LogCapture again;
  auto reopened = StateDb::Open(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  EXPECT_EQ(LinesWith(again, "migrated state database"), 0);
  EXPECT_EQ(LinesWith(again, "switched to incremental vacuum"), 0);
}

TEST(StateDbMigrations, AForeignDatabaseIsRefusedBeforeAnyChange) {
  TempDir dir;
  std::string path = dir.File("other.db");
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_TRUE(Exec(raw,
                     "CREATE TABLE volumes (id INTEGER PRIMARY KEY, name TEXT);"
                     "CREATE TABLE owners (name TEXT);"
                     "INSERT INTO volumes VALUES (1, 'mine');")
                    .ok());
    ASSERT_EQ(sqlite3_close(raw), SQLITE_OK);
  }
  const std::string before = ReadFile(path);
  oxide::testing::LogCapture log;
  auto db = StateDb::Open(path);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kFailedPrecondition);
  const std::string& message = db.status().message();
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("not an oxide-csi-plugin state database"), std::string::npos) << message;
  EXPECT_NE(message.find("owners, volumes"), std::string::npos) << message;
  EXPECT_EQ(ReadFile(path), before) << "the file was changed";
  EXPECT_FALSE(Exists(path + "-wal"));
  EXPECT_EQ(LinesWith(log, "migrated"), 0);

  // A `meta` table that is not ours is no different.
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_TRUE(Exec(raw,
                     "CREATE TABLE meta (key TEXT, value TEXT);"
                     "INSERT INTO meta VALUES ('created_by', 'someone else')")
                    .ok());
    ASSERT_EQ(sqlite3_close(raw), SQLITE_OK);
  }
  const std::string with_meta = ReadFile(path);
  auto again = StateDb::Open(path);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.status().message().find("meta, owners, volumes"), std::string::npos)
      << again.status().message();
  EXPECT_EQ(ReadFile(path), with_meta);
}

TEST(StateDbMigrations, AFailingMigrationLeavesTheFileExactlyAsItWas) {
  TempDir dir;
  std::string path = dir.File("state.db");
  MakeOldDatabase(path, 2);
  const std::string before = ReadFile(path);
  // A test seam: the plugin's migrations plus one that fails (its table exists already), so
  // 3..latest succeed inside the transaction and must be undone with it.
  std::vector<Migration> broken = Migrations();
  const int failing = StateDb::LatestSchemaVersion() + 1;
  broken.push_back({failing, "a broken step", "CREATE TABLE volumes (x INTEGER)"});
  oxide::testing::LogCapture log;
  {
    auto db = StateDb::Open(path, nullptr, &broken);
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), StatusCode::kFailedPrecondition);
    const std::string& message = db.status().message();
    EXPECT_NE(message.find("to " + std::to_string(failing) + " (a broken step) failed"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("left as it was, at schema 2"), std::string::npos) << message;
  }
  EXPECT_EQ(LinesWith(log, "migrated"), 0) << "nothing was committed, so nothing is logged";
  EXPECT_EQ(ReadFile(path), before) << "the file was changed";
  // And the real plugin still upgrades it.
  auto db = StateDb::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ((*db)->schema_version(), StateDb::LatestSchemaVersion());
}

}  // namespace
}  // namespace oxide::store
