// Crash recovery of the node rows: a stage or publish interrupted between its journal write and
// its result is completed (the mount exists) or rolled back (it does not) at the next start.
// The database is edited while the plugin is down to model the crash points. Root only.
#include <sqlite3.h>

#include <filesystem>

#include "node_fixture.h"
#include "support/temp_dir.h"

namespace oxide::testing {
namespace {

constexpr const char* kDiskA = "csi-0123456789abcdef-e2e";

void Sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST_F(NodeTest, InterruptedStageAndPublishAreCompletedOrRolledBackAtStart) {
  AddDisk(kSerialA);
  auto capability = MountCapability("ext4");
  ASSERT_TRUE(Stage("vol-1", kDiskA, Path("s"), capability).ok());
  ASSERT_TRUE(Publish("vol-1", Path("s"), Path("t"), capability).ok());
  KillPlugin();
  // Crash points: the stage was mounted but its result not yet written; a second publish was
  // journaled but never mounted; an unpublish was journaled but the unmount never happened.
  Sql(setup_->state_db(),
      "UPDATE node_stagings SET state = 'staging';"
      "INSERT INTO node_publications VALUES ('" +
          Path("t2") + "', 'vol-1', 'publishing', '" + Path("s") +
          "', 'x', 0, 0);"
          "UPDATE node_publications SET state = 'unpublishing' WHERE target_path = '" +
          Path("t") + "';");
  StartPlugin();
  EXPECT_NE(plugin_->Log().find("completed=2"), std::string::npos) << plugin_->Log();
  EXPECT_NE(plugin_->Log().find("rolled_back=1"), std::string::npos) << plugin_->Log();
  // The stage is complete (a repeat is OK, nothing new is mounted), t is still published, t2 is
  // not: its retry publishes it for real.
  EXPECT_TRUE(Stage("vol-1", kDiskA, Path("s"), capability).ok());
  EXPECT_TRUE(Publish("vol-1", Path("s"), Path("t"), capability).ok());
  EXPECT_EQ(MountsUnder(Path("")).size(), 2U);
  EXPECT_TRUE(Publish("vol-1", Path("s"), Path("t2"), capability).ok());
  EXPECT_EQ(MountsUnder(Path("")).size(), 3U);
  for (const char* target : {"t", "t2"})
    EXPECT_TRUE(Unpublish("vol-1", Path(target)).ok());
  EXPECT_TRUE(Unstage("vol-1", Path("s")).ok());
}

TEST_F(NodeTest, CliDrivesTheNodeVerbs) {
  AddDisk(kSerialA);
  std::string endpoint = "--endpoint=unix://" + setup_->socket_path();
  auto info = RunProgram(CtlBinary(), {endpoint, "node", "info"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find(kTestInstanceId), std::string::npos) << info.out;
  auto stage = RunProgram(
      CtlBinary(), {endpoint, "node", "stage", "--volume-id", "vol-1", "--staging-path", Path("s"),
                    "--fs-type", "xfs", "--publish-context", std::string("diskName=") + kDiskA});
  EXPECT_EQ(stage.exit_code, 0) << stage.err;
  auto publish = RunProgram(
      CtlBinary(), {endpoint, "node", "publish", "--volume-id", "vol-1", "--staging-path",
                    Path("s"), "--target-path", Path("t"), "--fs-type", "xfs", "--readonly"});
  EXPECT_EQ(publish.exit_code, 0) << publish.err;
  auto stats = RunProgram(CtlBinary(), {endpoint, "--output", "json", "node", "stats",
                                        "--volume-id", "vol-1", "--volume-path", Path("t")});
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("\"volume_condition\""), std::string::npos) << stats.out;
  auto bad = RunProgram(CtlBinary(), {endpoint, "node", "unpublish", "--volume-id", "vol-1",
                                      "--target-path", "relative"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("INVALID_ARGUMENT"), std::string::npos) << bad.err;
  for (auto args : std::vector<std::vector<std::string>>{
           {"node", "unpublish", "--volume-id", "vol-1", "--target-path", Path("t")},
           {"node", "unstage", "--volume-id", "vol-1", "--staging-path", Path("s")}}) {
    args.insert(args.begin(), endpoint);
    auto result = RunProgram(CtlBinary(), args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "ok\n");
  }
}

}  // namespace
}  // namespace oxide::testing
