// Starting the plugin with bad settings or an unusable state database: one clear line on
// stderr, exit code 2, never a crash, and --help / --version; the threads a started plugin runs.
#include <gtest/gtest.h>
#include <sched.h>
#include <sqlite3.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <sstream>

#include "csi.grpc.pb.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

int LineCount(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST(Startup, HelpListsTheSettingsAndExitsZero) {
  ProcessResult result = RunProgram(PluginBinary(), {"--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.out.find("--endpoint"), std::string::npos);
  EXPECT_NE(result.out.find("--state-db"), std::string::npos);
  EXPECT_NE(result.out.find("default:"), std::string::npos);
}

TEST(Startup, VersionPrintsTheBuildVersion) {
  ProcessResult result = RunProgram(PluginBinary(), {"--version"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out, std::string("oxide-csi-plugin ") + OXIDE_CSI_VERSION + "\n");
}

TEST(Startup, BadSettingsFailFastWithOneLineNamingThem) {
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  PluginSetup setup("all");
  std::vector<Case> cases = {
      {{"--mode=bogus"}, "--mode"},
      {{"--log-level=chatty"}, "--log-level"},
      {{"--endpoint=tcp://0:1"}, "--endpoint"},
      {{"--unknown"}, "unknown flag --unknown"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = setup.args;
    args.insert(args.end(), c.args.begin(), c.args.end());
    ProcessResult result = RunProgram(PluginBinary(), args, setup.env);
    EXPECT_EQ(result.exit_code, 2) << c.expected;
    EXPECT_EQ(LineCount(result.err), 1) << result.err;
    EXPECT_NE(result.err.find(c.expected), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find(kTestToken), std::string::npos);
  }
  ProcessResult missing = RunProgram(PluginBinary(), {"--mode=node"}, {});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("CSI_ENDPOINT"), std::string::npos) << missing.err;
}

// The token file is read at start (backend/client_config.h), not by the settings parser: one that
// cannot be used still stops the start with exit code 2 and one line naming the setting, before
// the state database is opened.
TEST(Startup, AnUnusableTokenFileStopsTheStartWithExitCode2) {
  PluginSetup setup("all");
  setup.env.erase("OXIDE_TOKEN");
  setup.env["OXIDE_TOKEN_FILE"] = setup.File("no-such-token");
  ProcessResult missing = RunProgram(PluginBinary(), setup.args, setup.env);
  EXPECT_EQ(missing.exit_code, 2);
  // As a setting is refused: one plain line, as before the token file was read by the backend.
  EXPECT_EQ(missing.err,
            "oxide-csi-plugin: invalid setting --oxide-token-file: cannot read the "
            "Oxide token file " +
                setup.File("no-such-token") + " (from OXIDE_TOKEN_FILE)\n");
  EXPECT_FALSE(std::filesystem::exists(setup.state_db()));

  WriteFile(setup.File("empty-token"), "\n");
  setup.env.erase("OXIDE_TOKEN_FILE");
  std::vector<std::string> args = setup.args;
  args.push_back("--oxide-token-file=" + setup.File("empty-token"));
  ProcessResult empty = RunProgram(PluginBinary(), args, setup.env);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err,
            "oxide-csi-plugin: invalid setting --oxide-token-file: the Oxide token "
            "file " +
                setup.File("empty-token") + " is empty\n");
}

TEST(Startup, ACorruptStateDatabaseStopsTheStartWithExitCode2) {
  PluginSetup setup("node");
  std::filesystem::create_directories(setup.File("state"));
  WriteFile(setup.state_db(), std::string(4096, 'z'));
  ProcessResult result = RunProgram(PluginBinary(), setup.args, setup.env);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(LineCount(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("corrupt"), std::string::npos) << result.err;
  EXPECT_EQ(ReadFile(setup.state_db()), std::string(4096, 'z')) << "data must be left untouched";
}

// One damaged page of a table (here node_stagings' root page, overwritten with garbage) stops the
// start: the integrity check at open finds it before any row is trusted; starting with rows
// unread would forget every staged volume. (A read error after the check, from a failing disk,
// is the stores' load status: GroupCommitTest injects it through a SQLite VFS.)
TEST(Startup, ADamagedTablePageStopsTheStartWithExitCode2) {
  PluginSetup setup("node");
  {
    PluginProcess plugin(setup.args, setup.env, setup.log_path());
    ASSERT_TRUE(plugin.WaitServing(setup.socket_path())) << plugin.Log();
    plugin.Signal(SIGTERM);
    ASSERT_EQ(plugin.WaitExit(), 0) << plugin.Log();
  }
  int64_t root_page = 0, page_size = 0;
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(setup.state_db().c_str(), &db), SQLITE_OK);
    sqlite3_stmt* query = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT rootpage, (SELECT page_size FROM pragma_page_size()) "
                                 "FROM sqlite_master WHERE name = 'node_stagings'",
                                 -1, &query, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(query), SQLITE_ROW);
    root_page = sqlite3_column_int64(query, 0);
    page_size = sqlite3_column_int64(query, 1);
    sqlite3_finalize(query);
    sqlite3_close(db);
  }
  ASSERT_GT(root_page, 1);
  std::string bytes = ReadFile(setup.state_db());
  ASSERT_GE(static_cast<int64_t>(bytes.size()), root_page * page_size);
  std::fill_n(bytes.begin() + (root_page - 1) * page_size, page_size, '\xee');
  WriteFile(setup.state_db(), bytes);

  ProcessResult result = RunProgram(PluginBinary(), setup.args, setup.env);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(LineCount(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("integrity check failed"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("Page " + std::to_string(root_page)), std::string::npos) << result.err;
}

TEST(Startup, AStateDatabaseInUseByAnotherPluginIsRefused) {
  PluginSetup setup("node");
  auto first = setup.Start();
  PluginSetup other("node");
  std::vector<std::string> args = other.args;
  args[2] = "--state-db=" + setup.state_db();
  ProcessResult second = RunProgram(PluginBinary(), args, other.env);
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("locked by another process"), std::string::npos) << second.err;
}

// The gRPC completion-queue pump runs SCHED_BATCH, so that gRPC waking it never preempts the
// loop thread, which keeps the normal policy.
TEST(Startup, TheCompletionQueuePumpIsABatchThreadAndTheLoopIsNot) {
  PluginSetup setup("all");
  auto plugin = setup.Start();
  // The socket accepts connections before the pump exists; an answered call means it runs.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  csi::v1::GetPluginInfoResponse info;
  ASSERT_TRUE(csi::v1::Identity::NewStub(UnixChannel(setup.socket_path()))
                  ->GetPluginInfo(&context, {}, &info)
                  .ok());
  const std::string tasks = "/proc/" + std::to_string(plugin->pid()) + "/task";
  int pumps = 0;
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::string name = ReadFile((task.path() / "comm").string());
    if (!name.empty() && name.back() == '\n') name.pop_back();
    if (name != "csi-cq-pump") continue;
    ++pumps;
    EXPECT_EQ(sched_getscheduler(std::stoi(task.path().filename().string())), SCHED_BATCH);
  }
  EXPECT_EQ(pumps, 1);
  EXPECT_EQ(sched_getscheduler(plugin->pid()), SCHED_OTHER);  // the main thread runs the loop
}

// libcurl is opened only by the modes that talk to Oxide: the node DaemonSet does not carry it
// and its chain of libraries (~5 MiB of idle RSS).
TEST(Startup, OnlyTheControllerModesLoadLibcurl) {
  for (const std::string mode : {"node", "controller", "all"}) {
    PluginSetup setup(mode);
    auto plugin = setup.Start();
    const std::string maps = ReadFile("/proc/" + std::to_string(plugin->pid()) + "/maps");
    const bool loaded = maps.find("libcurl") != std::string::npos;
    EXPECT_EQ(loaded, mode != "node") << "--mode=" << mode;
  }
}

// Without libcurl a controller cannot work: one line and exit code 2, not a crash at the first
// call. The library is hidden in a private mount namespace (an empty file bound over it).
TEST(Startup, AControllerWithoutLibcurlStopsTheStartWithOneLine) {
  const std::string library =
      std::filesystem::canonical("/usr/lib/x86_64-linux-gnu/libcurl.so.4").string();
  PluginSetup setup("controller");
  std::vector<std::string> args = {
      "-m", "/bin/sh", "-c", "/bin/mount --bind /dev/null " + library + " && exec \"$0\" \"$@\"",
      PluginBinary()};
  args.insert(args.end(), setup.args.begin(), setup.args.end());
  ProcessResult result = RunProgram("/usr/bin/unshare", args, setup.env);
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(LineCount(result.err), 1) << result.err;
  EXPECT_NE(result.err.find("cannot load libcurl.so.4 (Debian package libcurl4)"),
            std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace oxide::testing
