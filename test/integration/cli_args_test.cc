// oxide-csi-ctl's argument handling through the real binary against the real plugin (--mode=all,
// oxide-sim with guest devices; needs root): a table of bad invocations, each refused with exit 2
// and its message, no "terminate called", and no call reaching the plugin — observed through the
// plugin's /metrics, whose oxide_csi_rpc_duration_seconds_count counts every CSI call it served.
// Then good invocations (`--flag value`, empty lists), the plugin's INVALID_ARGUMENT messages
// naming the CLI's flags, the connect-failure message, and the help text.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "guest_volume_fixture.h"
#include "support/metrics_scrape.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

struct BadInvocation {
  std::vector<std::string> args;  // after --endpoint
  std::string message;            // the whole first line of stderr must contain it
};

const std::vector<BadInvocation> kBadInvocations = {
    // The invocations of issue 23.
    {{"controller", "create", "v2", "--size-gib=abc"},
     "error: --size-gib: \"abc\" is not a whole number of GiB"},
    {{"controller", "list", "--max=abc"}, "error: --max: \"abc\" is not a whole number of entries"},
    {{"controller", "create", "v2", "--size-gib=99999999999999999999"},
     "error: --size-gib: 99999999999999999999 is too large (at most 1023 GiB)"},
    {{"controller", "create", "v2", "--size-gib=9999999999999"},
     "error: --size-gib: 9999999999999 is too large (at most 1023 GiB)"},
    {{"controller", "create", "v2", "--size-gib=1.5"},
     "error: --size-gib: \"1.5\" is not a whole number of GiB"},
    {{"controller", "create", "v2", "--size-gib=3abc"},
     "error: --size-gib: \"3abc\" is not a whole number of GiB"},
    {{"controller", "create", "v2", "--bogus-flag"},
     "error: unknown flag --bogus-flag for controller create; its flags: --size-gib, "
     "--block-size, --disk-type, --from-snapshot, --from-volume, --block, --fs-type, --readonly"},
    {{"controller", "create", "v2", "--disk-type=nvme"},
     "error: --disk-type: \"nvme\" is not one of distributed or local"},
    {{"controller", "create", "v2", "--sizegib=3"},
     "error: unknown flag --sizegib for controller create (did you mean --size-gib?)"},
    {{"controller", "create", "v2", "--size-gib=0"},
     "error: --size-gib: 0 is too small (must be at least 1)"},
    // More numbers: signs, empty, missing values, every numeric flag.
    {{"controller", "create", "v2", "--size-gib=-3"},
     "error: --size-gib: \"-3\" is not a whole number of GiB"},
    {{"controller", "create", "v2", "--size-gib=+3"},
     "error: --size-gib: \"+3\" is not a whole number of GiB"},
    {{"controller", "create", "v2", "--size-gib= 3"},
     "error: --size-gib: \" 3\" is not a whole number of GiB"},
    {{"controller", "create", "v2", "--size-gib="},
     "error: --size-gib: \"\" is not a whole number of GiB"},
    {{"controller", "create", "v2", "--size-gib=1024"},
     "error: --size-gib: 1024 is too large (at most 1023 GiB)"},
    {{"controller", "create", "v2", "--size-gib"},
     "error: --size-gib needs a value (--size-gib N)"},
    {{"controller", "create", "v2", "--size-gib", "--block"},
     "error: --size-gib needs a value (--size-gib N)"},
    {{"controller", "create", "v2", "--size-gib", "3", "--size-gib=4"},
     "error: --size-gib is given twice"},
    {{"controller", "create", "v2", "--block-size=4k"},
     "error: --block-size: \"4k\" is not a whole number of bytes"},
    {{"controller", "create", "v2", "--block-size=8192"},
     "error: --block-size: 8192 is too large (at most 4096 bytes)"},
    {{"controller", "list", "--max=0"}, "error: --max: 0 is too small (must be at least 1)"},
    {{"controller", "list", "--max", "2147483648"},
     "error: --max: 2147483648 is too large (at most 2147483647 entries)"},
    {{"snapshot", "list", "--max=-1"}, "error: --max: \"-1\" is not a whole number of entries"},
    {{"snapshot", "list", "--max"}, "error: --max needs a value (--max N)"},
    {{"--timeout=abc", "identity", "probe"},
     "error: --timeout: \"abc\" is not a whole number of seconds"},
    {{"--timeout", "0", "identity", "probe"},
     "error: --timeout: 0 is too small (must be at least 1)"},
    {{"--timeout=1.5", "identity", "probe"},
     "error: --timeout: \"1.5\" is not a whole number of seconds"},
    // Positional arguments.
    {{"controller", "create"}, "error: controller create: missing <name> (it takes <name>)"},
    {{"controller", "create", "--size-gib", "3"},
     "error: controller create: missing <name> (it takes <name>)"},
    {{"controller", "create", "v2", "v3"},
     "error: controller create: unexpected argument \"v3\" (it takes <name>)"},
    {{"controller", "publish", "vol-1"},
     "error: controller publish: missing <node-id> (it takes <volume-id> <node-id>)"},
    {{"controller", "unpublish", "vol-1", "node-1", "node-2"},
     "error: controller unpublish: unexpected argument \"node-2\" (it takes <volume-id> "
     "[<node-id>])"},
    {{"snapshot", "create", "snap-1"},
     "error: snapshot create: missing <source-volume-id> (it takes <name> <source-volume-id>)"},
    {{"identity", "info", "extra"},
     "error: identity info: unexpected argument \"extra\" (it takes no arguments)"},
    // Node verbs: the same parser, required flags checked before any call.
    {{"node", "stage", "--volume-id", "vol-1"},
     "error: node stage: --staging-path is required (--staging-path PATH)"},
    {{"node", "publish", "--volume-id=vol-1", "--staging-path=/s"},
     "error: node publish: --target-path is required (--target-path PATH)"},
    {{"node", "stats", "--volume-id", "vol-1", "--target-path", "/t"},
     "error: unknown flag --target-path for node stats; its flags: --volume-id, --volume-path"},
    {{"node", "stage", "--volume-id", "v", "--staging-path", "/s", "--publish-context", "diskName"},
     "error: --publish-context: \"diskName\" is not KEY=VALUE"},
    {{"node", "publish", "--volume-id", "v", "--staging-path", "/s", "--target-path", "/t",
      "--readonly=yes"},
     "error: --readonly takes no value (give --readonly alone)"},
    {{"node", "stage", "--volume-id", "v", "--staging-path", "/s", "--access-mode", "BOGUS"},
     "error: --access-mode: \"BOGUS\" is not a CSI access mode"},
    {{"node", "unstage", "vol-1", "--staging-path", "/s"},
     "error: node unstage: unexpected argument \"vol-1\" (it takes no arguments)"},
    {{"node", "stage", "-v", "vol-1"},
     "error: unknown flag -v for node stage (flags are spelled --name)"},
    // Flags that exclude each other.
    {{"controller", "create", "v2", "--from-snapshot=s", "--from-volume", "v"},
     "error: controller create: --from-snapshot and --from-volume cannot be given together"},
    {{"controller", "publish", "vol-1", "node-1", "--fs-type=xfs", "--block"},
     "error: controller publish: --block and --fs-type cannot be given together"},
    {{"node", "stage", "--volume-id", "v", "--staging-path", "/s", "--block", "--mount-flag", "ro"},
     "error: node stage: --block and --mount-flag cannot be given together"},
    // Global flags, groups and verbs.
    {{"--output=yaml", "identity", "info"}, "error: --output: \"yaml\" is not one of text or json"},
    {{"--bogus", "identity", "info"}, "error: unknown flag --bogus for oxide-csi-ctl"},
    {{"controller", "dance"}, "error: unknown verb \"controller dance\"; the controller verbs: "},
    {{"volumes", "list"}, "error: unknown group \"volumes\"; the groups: identity, controller, "},
    {{"controller"}, "error: controller: missing <verb>; the controller verbs: create, delete"},
};

class CliArgsTest : public GuestVolumeTest {
 protected:
  std::vector<std::string> plugin_args() const override {
    std::vector<std::string> args = GuestVolumeTest::plugin_args();
    args.push_back("--metrics-address=127.0.0.1:0");
    return args;
  }

  // Every CSI call the plugin has served.
  double CallsServed() { return ScrapeOf(*plugin_).Sum("oxide_csi_rpc_duration_seconds_count"); }

  ProcessResult Ctl(std::vector<std::string> args) {
    args.insert(args.begin(), "--endpoint=unix://" + setup_->socket_path());
    return RunProgram(CtlBinary(), args);
  }
};

std::string Joined(const std::vector<std::string>& args) {
  std::string text;
  for (const std::string& arg : args)
    text += (text.empty() ? "" : " ") + arg;
  return text;
}

TEST_F(CliArgsTest, BadInvocationsExitTwoWithTheirMessageAndSendNothing) {
  if (::testing::Test::IsSkipped()) return;
  const double served_before = CallsServed();
  for (const BadInvocation& bad : kBadInvocations) {
    SCOPED_TRACE("oxide-csi-ctl " + Joined(bad.args));
    ProcessResult result = Ctl(bad.args);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(result.signal, 0);
    EXPECT_NE(result.err.find(bad.message), std::string::npos)
        << "stderr: " << result.err << "expected: " << bad.message;
    EXPECT_EQ(result.err.find("terminate called"), std::string::npos) << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    EXPECT_EQ(result.out, "");
  }
  EXPECT_EQ(CallsServed(), served_before) << "a refused invocation reached the plugin";
}

TEST_F(CliArgsTest, GoodInvocationsTakeFlagValuesEitherWay) {
  if (::testing::Test::IsSkipped()) return;
  ProcessResult empty = Ctl({"controller", "list"});
  EXPECT_EQ(empty.exit_code, 0) << empty.err;
  EXPECT_EQ(empty.out, "(no volumes)\n");
  ProcessResult no_snapshots = Ctl({"snapshot", "list", "--max", "5"});
  EXPECT_EQ(no_snapshots.exit_code, 0) << no_snapshots.err;
  EXPECT_EQ(no_snapshots.out, "(no snapshots)\n");
  ProcessResult json = Ctl({"--output", "json", "controller", "list"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(json.out.find("(no volumes)"), std::string::npos) << json.out;
  ProcessResult late_global = Ctl({"controller", "list", "--output", "json", "--timeout=20"});
  EXPECT_EQ(late_global.exit_code, 0) << late_global.err;
  EXPECT_EQ(late_global.out, json.out) << "a global flag after the verb works as before it";

  ProcessResult spaced = Ctl({"--timeout", "20", "controller", "create", "pvc-spaced", "--size-gib",
                              "3", "--fs-type", "xfs"});
  EXPECT_EQ(spaced.exit_code, 0) << spaced.err;
  EXPECT_NE(spaced.out.find("capacity_bytes: 3221225472"), std::string::npos) << spaced.out;
  ProcessResult equals = Ctl(
      {"controller", "create", "pvc-equals", "--size-gib=1023", "--block-size=4096", "--block"});
  EXPECT_EQ(equals.exit_code, 0) << equals.err;
  EXPECT_NE(equals.out.find("capacity_bytes: 1098437885952"), std::string::npos) << equals.out;
  ProcessResult local = Ctl({"controller", "create", "pvc-local", "--disk-type", "local"});
  EXPECT_EQ(local.exit_code, 0) << local.err;
  EXPECT_NE(local.out.find("diskType=local"), std::string::npos) << local.out;
  ProcessResult dashes = Ctl({"controller", "get", "--", "--not-a-flag"});
  EXPECT_EQ(dashes.exit_code, 1) << "`--` ends the flags: the id reaches the plugin";
  EXPECT_EQ(dashes.err.find("unknown flag"), std::string::npos) << dashes.err;

  ProcessResult listed = Ctl({"controller", "list", "--max", "1"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("next_token: "), std::string::npos) << listed.out;
}

// What only the plugin can judge comes back naming the CLI's flags, with the protocol field.
TEST_F(CliArgsTest, ThePluginsInvalidArgumentNamesTheFlags) {
  if (::testing::Test::IsSkipped()) return;
  const double served_before = CallsServed();
  ProcessResult empty = Ctl({"node", "stage", "--volume-id=vol-1",
                             "--staging-path=", "--publish-context", "diskName=disk-1"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_EQ(empty.err,
            "error: INVALID_ARGUMENT: --staging-path is required (staging_target_path)\n");
  ProcessResult relative =
      Ctl({"node", "publish", "--volume-id", "vol-1", "--staging-path", "/var/lib/kubelet/s",
           "--target-path", "pods/t", "--publish-context", "diskName=disk-1"});
  EXPECT_EQ(relative.exit_code, 1);
  EXPECT_EQ(relative.err,
            "error: INVALID_ARGUMENT: --target-path \"pods/t\" is not an absolute path "
            "(target_path)\n");
  ProcessResult fs =
      Ctl({"node", "stage", "--volume-id", "vol-1", "--staging-path", "/var/lib/kubelet/s",
           "--fs-type", "btrfs", "--publish-context", "diskName=disk-1"});
  EXPECT_EQ(fs.exit_code, 1);
  EXPECT_EQ(fs.err,
            "error: INVALID_ARGUMENT: --fs-type \"btrfs\" is not supported; use ext4 or xfs "
            "(fs_type)\n");
  ProcessResult local_512 =
      Ctl({"controller", "create", "pvc-local-512", "--disk-type=local", "--block-size=512"});
  EXPECT_EQ(local_512.exit_code, 1);
  EXPECT_NE(local_512.err.find("error: INVALID_ARGUMENT: parameter --block-size=\"512\" does not "
                               "go with --disk-type=\"local\""),
            std::string::npos)
      << local_512.err;
  // The plugin counts a call once its answer has gone out: the count may trail the last answer.
  EXPECT_TRUE(WaitUntil([&] { return CallsServed() >= served_before + 4; }));
  EXPECT_EQ(CallsServed(), served_before + 4) << "these four are the plugin's to judge";
}

TEST(CliConnect, NoPluginSaysWhereItLookedAndWhatToCheck) {
  TempDir dir;
  const std::string missing = dir.File("csi.sock");
  ProcessResult result =
      RunProgram(CtlBinary(), {"--endpoint", "unix://" + missing, "controller", "list"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "error: cannot reach the plugin at unix://" + missing +
                            ": no socket there (No such file or directory); is the plugin "
                            "running and serving unix://" +
                            missing + "?\n");

  // A socket file nobody listens on (bound, never listening).
  const std::string dead = dir.File("dead.sock");
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::snprintf(address.sun_path, sizeof address.sun_path, "%s", dead.c_str());
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ProcessResult refused =
      RunProgram(CtlBinary(), {"--endpoint", "unix://" + dead, "identity", "probe"});
  close(fd);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err, "error: cannot reach the plugin at unix://" + dead +
                             ": nothing is listening on the socket (Connection refused); is the "
                             "plugin running and serving unix://" +
                             dead + "?\n");

  ProcessResult json = RunProgram(
      CtlBinary(), {"--output=json", "--endpoint", "unix://" + missing, "identity", "probe"});
  EXPECT_EQ(json.exit_code, 1);
  EXPECT_NE(json.out.find("\"code\":\"UNAVAILABLE\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("is the plugin running and serving"), std::string::npos) << json.out;
}

// The help comes from the declarations the parser reads: every verb, every flag, 80 columns.
TEST(CliHelp, ListsEveryVerbAndFlagWithinEightyColumns) {
  ProcessResult help = RunProgram(CtlBinary(), {"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  for (const char* entry :
       {"  identity probe\n", "  controller create <name> [--size-gib N] [--block-size N]",
        "  controller unpublish <volume-id> [<node-id>]\n",
        "  controller list [--max N] [--token T]\n",
        "  node stage --volume-id ID --staging-path PATH [--fs-type FS] [--block]",
        "  snapshot list [--snapshot-id ID]", "  --timeout SECONDS"}) {
    EXPECT_NE(help.out.find(entry), std::string::npos) << entry << "\n" << help.out;
  }
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"},
                                             {"controller", "--help"},
                                             {"node", "--help"},
                                             {"snapshot", "list", "--help"}}) {
    ProcessResult result = RunProgram(CtlBinary(), args);
    EXPECT_EQ(result.exit_code, 0) << Joined(args) << ": " << result.err;
    std::istringstream lines(result.out);
    for (std::string line; std::getline(lines, line);) {
      EXPECT_LE(line.size(), 80u) << Joined(args) << ": " << line;
    }
  }
  ProcessResult controller = RunProgram(CtlBinary(), {"controller", "--help"});
  EXPECT_NE(controller.out.find("--size-gib N"), std::string::npos) << controller.out;
  EXPECT_NE(controller.out.find("to 1023 GiB."), std::string::npos) << controller.out;
  EXPECT_EQ(controller.out.find("node stage"), std::string::npos) << controller.out;
}

}  // namespace
}  // namespace oxide::testing
