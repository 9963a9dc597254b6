// SQLite's error log routed through util/log (RouteSqliteLog, app/plugin.h): each report becomes
// one JSON record with source=sqlite and its code, at debug level (the store reports the failure
// itself).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/plugin.h"
#include "support/temp_dir.h"
#include "util/log.h"

namespace oxide {
namespace {

TEST(SqliteLogTest, ReportsBecomeRecordsWithMappedLevels) {
  testing::TempDir dir;
  const int fd = open(dir.File("log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  log::SetOutputFd(fd);
  log::Configure(log::Level::kDebug, log::Format::kJson);
  ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);  // sqlite3_config works only before initialize
  ASSERT_TRUE(RouteSqliteLog());
  sqlite3_log(SQLITE_CORRUPT, "database disk image is malformed");
  sqlite3_log(SQLITE_BUSY, "database is locked");
  log::SetOutputFd(STDERR_FILENO);
  log::Configure(log::Level::kInfo, log::Format::kText);
  close(fd);
  const std::string text = testing::ReadFile(dir.File("log"));
  const auto end = text.find('\n');
  ASSERT_NE(end, std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  auto record = nlohmann::json::parse(text.substr(0, end));
  EXPECT_EQ(record["level"], "debug");
  EXPECT_EQ(record["source"], "sqlite");
  EXPECT_EQ(record["msg"], "database disk image is malformed");
  EXPECT_EQ(record["sqlite_code"], SQLITE_CORRUPT);
}

}  // namespace
}  // namespace oxide
