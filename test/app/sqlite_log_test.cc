// SQLite's error log routed through util/log (RouteSqliteLog, app/plugin.h): each report becomes
// one JSON record with source=sqlite and its code, at debug level (the store reports the failure
// itself), and nothing at all below debug.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/plugin.h"
#include "support/log_capture.h"
#include "util/log.h"

namespace oxide {
namespace {

// Routes SQLite's log once (sqlite3_config works only before sqlite3_initialize) and puts the
// plugin's log back to its defaults afterwards.
class SqliteLogTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_EQ(sqlite3_shutdown(), SQLITE_OK);
    ASSERT_TRUE(RouteSqliteLog());
  }
  void TearDown() override { log::Configure(log::Level::kInfo, log::Format::kText); }
};

TEST_F(SqliteLogTest, ReportsBecomeDebugRecordsNamingSqliteAndTheCode) {
  testing::LogCapture capture;
  log::Configure(log::Level::kDebug, log::Format::kJson);
  sqlite3_log(SQLITE_CORRUPT, "database disk image is malformed");
  sqlite3_log(SQLITE_BUSY, "database is locked");
  const std::vector<std::string> lines = capture.Lines();
  ASSERT_EQ(lines.size(), 2U) << capture.Text();
  const std::pair<int, const char*> expected[] = {
      {SQLITE_CORRUPT, "database disk image is malformed"}, {SQLITE_BUSY, "database is locked"}};
  for (size_t i = 0; i < lines.size(); ++i) {
    auto record = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(record["level"], "debug") << lines[i];
    EXPECT_EQ(record["source"], "sqlite") << lines[i];
    EXPECT_EQ(record["msg"], expected[i].second) << lines[i];
    EXPECT_EQ(record["sqlite_code"], expected[i].first) << lines[i];
  }
}

TEST_F(SqliteLogTest, BelowDebugLevelReportsWriteNothing) {
  testing::LogCapture capture;
  log::Configure(log::Level::kInfo, log::Format::kJson);
  sqlite3_log(SQLITE_CORRUPT, "database disk image is malformed");
  EXPECT_EQ(capture.Text(), "");
}

}  // namespace
}  // namespace oxide
