// Settings from flags and environment: defaults, precedence, every kind of bad value. No file is
// made or read: parsing is a function of the arguments and an environment map.
#include "config/settings.h"

#include <gtest/gtest.h>

#include <chrono>
#include <utility>

namespace oxide {
namespace {

const std::string kToken = "oxide-token-supersecret123";
const std::string kInstance = "6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f";

Environment ControllerEnv() {
  return {{"OXIDE_HOST", "https://oxide.example.com"},
          {"OXIDE_TOKEN", kToken},
          {"OXIDE_PROJECT", "k8s"},
          {"OXIDE_INSTANCE_ID", kInstance}};
}

StatusOr<ParsedCommandLine> Parse(std::vector<std::string> args,
                                  Environment env = ControllerEnv()) {
  return ParseCommandLine(args, env);
}

TEST(Settings, DefaultsWithOnlyTheRequiredSettings) {
  auto parsed = Parse({"--endpoint=unix:///csi/csi.sock"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Settings& s = parsed->settings;
  EXPECT_EQ(s.socket_path, "/csi/csi.sock");
  EXPECT_EQ(s.mode, Mode::kAll);
  EXPECT_EQ(s.driver_name, "csi.oxide.computer");
  EXPECT_EQ(s.state_db, "/var/lib/oxide-csi/state.db");
  EXPECT_EQ(s.socket_mode, 0660u);
  EXPECT_EQ(s.shutdown_grace, std::chrono::seconds(15));
  EXPECT_EQ(s.clone_snapshot_max_age, std::chrono::minutes(20));
  EXPECT_EQ(s.oxide_host, "https://oxide.example.com");
  EXPECT_EQ(s.oxide_token, kToken);
  EXPECT_EQ(s.oxide_token_file, "");  // OXIDE_TOKEN: nothing to watch
  EXPECT_EQ(s.oxide_project, "k8s");
  EXPECT_EQ(s.instance_id, kInstance);
  EXPECT_EQ(s.advertised_csi_minor, 12);
  EXPECT_EQ(s.probe_oxide_grace, std::chrono::seconds(60));
}

TEST(Settings, ProbeOxideGraceTakesADurationFromTheFlagOrTheEnvironment) {
  auto grace = [](const std::string& flag, const Environment& env) {
    std::vector<std::string> args = {"--endpoint=unix:///csi/csi.sock"};
    if (!flag.empty()) args.push_back(flag);
    auto parsed = ParseCommandLine(args, env);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    return parsed.ok() ? parsed->settings.probe_oxide_grace : std::chrono::milliseconds(-1);
  };
  using std::chrono::milliseconds;
  EXPECT_EQ(grace("--probe-oxide-grace=0", ControllerEnv()), milliseconds(0));
  EXPECT_EQ(grace("--probe-oxide-grace=0s", ControllerEnv()), milliseconds(0));
  EXPECT_EQ(grace("--probe-oxide-grace=1500ms", ControllerEnv()), milliseconds(1500));
  EXPECT_EQ(grace("--probe-oxide-grace=90s", ControllerEnv()), milliseconds(90'000));
  EXPECT_EQ(grace("--probe-oxide-grace=5m", ControllerEnv()), milliseconds(300'000));
  EXPECT_EQ(grace("--probe-oxide-grace=1h", ControllerEnv()), milliseconds(3'600'000));
  Environment env = ControllerEnv();
  env["OXIDE_CSI_PROBE_OXIDE_GRACE"] = "2m";
  EXPECT_EQ(grace("", env), milliseconds(120'000));
  EXPECT_EQ(grace("--probe-oxide-grace=10s", env), milliseconds(10'000)) << "the flag wins";
}

// --shutdown-grace takes a duration; --shutdown-grace-seconds, its older name, whole seconds.
TEST(Settings, ShutdownGraceTakesADurationAndTheOldNameSeconds) {
  auto grace = [](const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"--endpoint=unix:///csi/csi.sock"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto parsed = ParseCommandLine(args, ControllerEnv());
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    return parsed.ok() ? parsed->settings.shutdown_grace : std::chrono::milliseconds(-1);
  };
  using std::chrono::milliseconds;
  EXPECT_EQ(grace({"--shutdown-grace=20s"}), milliseconds(20'000));
  EXPECT_EQ(grace({"--shutdown-grace=750ms"}), milliseconds(750));
  EXPECT_EQ(grace({"--shutdown-grace=0"}), milliseconds(0));
  EXPECT_EQ(grace({"--shutdown-grace-seconds=20"}), milliseconds(20'000));
  EXPECT_EQ(grace({"--shutdown-grace-seconds=20", "--shutdown-grace=3s"}), milliseconds(3'000))
      << "the last one given wins";
}

TEST(Settings, CloneSnapshotMaxAgeTakesADuration) {
  auto parsed = ParseCommandLine(
      {"--endpoint=unix:///csi/csi.sock", "--clone-snapshot-max-age=30m"}, ControllerEnv());
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->settings.clone_snapshot_max_age, std::chrono::minutes(30));
}

// Each duration option's bounds (settings_options.cc's DurationOption), named in its refusal.
TEST(Settings, DurationOptionsRefuseValuesOutsideTheirBounds) {
  auto refusal = [](const std::string& flag, const Environment& env) {
    auto parsed = ParseCommandLine({"--endpoint=unix:///csi/csi.sock", flag}, env);
    return parsed.ok() ? std::string("accepted") : parsed.status().message();
  };
  auto too_long = [](const std::string& flag, const std::string& text, const std::string& most) {
    return "invalid setting --" + flag + ": \"" + text +
           "\" is not a duration such as 500ms, 60s, 2m or 1h (at most " + most + ")";
  };
  const std::string too_short = "invalid setting --clone-snapshot-max-age: must be at least 1s";
  const std::pair<std::string, std::string> cases[] = {
      {"--clone-snapshot-max-age=0", too_short},
      {"--clone-snapshot-max-age=999ms", too_short},
      {"--clone-snapshot-max-age=1s", "accepted"},
      {"--clone-snapshot-max-age=168h", "accepted"},
      {"--clone-snapshot-max-age=169h", too_long("clone-snapshot-max-age", "169h", "604800s")},
      {"--shutdown-grace=60m", "accepted"},
      {"--shutdown-grace=61m", too_long("shutdown-grace", "61m", "3600s")},
      {"--probe-oxide-grace=24h", "accepted"},
      {"--probe-oxide-grace=25h", too_long("probe-oxide-grace", "25h", "86400s")},
  };
  for (const auto& [flag, expected] : cases) {
    EXPECT_EQ(refusal(flag, ControllerEnv()), expected) << flag;
  }
  Environment env = ControllerEnv();
  env["OXIDE_CSI_PROBE_OXIDE_GRACE"] = "1d";
  EXPECT_EQ(refusal("--mode=all", env),
            too_long("probe-oxide-grace", "1d", "86400s") + " (from OXIDE_CSI_PROBE_OXIDE_GRACE)");
}

TEST(Settings, EndpointFromEnvironmentAndFlagsOverrideIt) {
  Environment env = ControllerEnv();
  env["CSI_ENDPOINT"] = "/run/a.sock";
  auto from_env = Parse({}, env);
  ASSERT_TRUE(from_env.ok()) << from_env.status().ToString();
  EXPECT_EQ(from_env->settings.socket_path, "/run/a.sock");
  auto overridden = Parse({"--endpoint", "unix:///run/b.sock"}, env);
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ(overridden->settings.socket_path, "/run/b.sock");
}

TEST(Settings, HelpAndVersionNeedNothingElse) {
  auto help = ParseCommandLine({"--help"}, {});
  ASSERT_TRUE(help.ok());
  EXPECT_EQ(help->action, ParsedCommandLine::Action::kHelp);
  auto version = ParseCommandLine({"--version"}, {});
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->action, ParsedCommandLine::Action::kVersion);
}

TEST(Settings, HelpListsEverySettingWithItsDefault) {
  std::string help = HelpText();
  for (const char* flag : {"--endpoint",
                           "--mode",
                           "--driver-name",
                           "--state-db",
                           "--socket-mode",
                           "--log-level",
                           "--log-format",
                           "--shutdown-grace",
                           "--shutdown-grace-seconds",
                           "--clone-snapshot-max-age",
                           "--probe-oxide-grace",
                           "--oxide-host",
                           "--oxide-project",
                           "--oxide-token-file",
                           "--oxide-ca-file",
                           "--oxide-insecure",
                           "--instance-id",
                           "--instance-metadata-file",
                           "--advertise-csi-version",
                           "--instance-id-source",
                           "OXIDE_INSTANCE_ID_SOURCE",
                           "--node-name",
                           "NODE_NAME",
                           "--kubernetes-timeout-seconds",
                           "--wait-for-provider-id",
                           "OXIDE_CSI_WAIT_FOR_PROVIDER_ID",
                           "--remove-startup-taint",
                           "OXIDE_CSI_REMOVE_STARTUP_TAINT",
                           "CSI_ENDPOINT",
                           "OXIDE_TOKEN"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(help.find("default: /var/lib/oxide-csi/state.db"), std::string::npos);
}

struct BadCase {
  std::vector<std::string> args;
  Environment env;
  std::string expected_in_message;
};

class SettingsRejects : public ::testing::TestWithParam<BadCase> {};

TEST_P(SettingsRejects, WithAMessageNamingTheSetting) {
  const BadCase& c = GetParam();
  auto parsed = ParseCommandLine(c.args, c.env);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find(c.expected_in_message), std::string::npos)
      << parsed.status().message();
  EXPECT_EQ(parsed.status().message().find(kToken), std::string::npos) << "token leaked";
}

const std::string kEp = "--endpoint=unix:///csi/csi.sock";

INSTANTIATE_TEST_SUITE_P(
    BadValues, SettingsRejects,
    ::testing::Values(
        BadCase{{}, ControllerEnv(), "--endpoint"},
        BadCase{{"--endpoint=tcp://127.0.0.1:9000"}, ControllerEnv(), "only unix sockets"},
        BadCase{{"--endpoint=unix://relative.sock"}, ControllerEnv(), "absolute"},
        BadCase{{"--endpoint=csi.sock"}, ControllerEnv(), "absolute"},
        BadCase{{"--endpoint=/a/../b.sock"}, ControllerEnv(), "normalized"},
        BadCase{{"--endpoint=/" + std::string(120, 'x')}, ControllerEnv(), "longer than"},
        BadCase{{kEp, "--mode=everything"}, ControllerEnv(), "--mode"},
        BadCase{{kEp, "--driver-name=-bad"}, ControllerEnv(), "--driver-name"},
        BadCase{{kEp, "--driver-name=" + std::string(64, 'a')}, ControllerEnv(), "--driver-name"},
        BadCase{{kEp, "--state-db=relative.db"}, ControllerEnv(), "--state-db"},
        BadCase{{kEp, "--state-db=/csi/state.db"}, ControllerEnv(), "socket's directory"},
        BadCase{{kEp, "--socket-mode=999"}, ControllerEnv(), "--socket-mode"},
        BadCase{{kEp, "--log-level=loud"}, ControllerEnv(), "--log-level"},
        BadCase{{kEp, "--log-format=xml"}, ControllerEnv(), "--log-format"},
        BadCase{{kEp, "--advertise-csi-version=1.11"}, ControllerEnv(), "one of 1.12, 1.10"},
        BadCase{{kEp, "--shutdown-grace-seconds=-1"}, ControllerEnv(), "--shutdown-grace-seconds"},
        BadCase{{kEp, "--shutdown-grace-seconds=ten"}, ControllerEnv(), "--shutdown-grace-seconds"},
        BadCase{{kEp, "--shutdown-grace=15"}, ControllerEnv(), "--shutdown-grace"},
        BadCase{{kEp, "--shutdown-grace=2h"}, ControllerEnv(), "--shutdown-grace"},
        BadCase{
            {kEp, "--clone-snapshot-max-age=500ms"}, ControllerEnv(), "--clone-snapshot-max-age"},
        BadCase{{kEp, "--clone-snapshot-max-age=10"}, ControllerEnv(), "--clone-snapshot-max-age"},
        BadCase{{kEp, "--probe-oxide-grace=60"}, ControllerEnv(), "--probe-oxide-grace"},
        BadCase{{kEp, "--probe-oxide-grace=-1s"}, ControllerEnv(), "--probe-oxide-grace"},
        BadCase{{kEp, "--probe-oxide-grace=1d"}, ControllerEnv(), "--probe-oxide-grace"},
        BadCase{{kEp, "--probe-oxide-grace=s"}, ControllerEnv(), "--probe-oxide-grace"},
        BadCase{{kEp, "--probe-oxide-grace=25h"}, ControllerEnv(), "--probe-oxide-grace"},
        BadCase{{kEp, "--probe-oxide-grace=99999999999999999999h"},
                ControllerEnv(),
                "--probe-oxide-grace"},
        BadCase{{kEp},
                [] {
                  Environment env = ControllerEnv();
                  env["OXIDE_CSI_PROBE_OXIDE_GRACE"] = "soon";
                  return env;
                }(),
                "OXIDE_CSI_PROBE_OXIDE_GRACE"},
        BadCase{{kEp, "--no-such-flag=1"}, ControllerEnv(), "unknown flag --no-such-flag"},
        BadCase{{kEp, "positional"}, ControllerEnv(), "unexpected argument"},
        BadCase{{kEp, "--mode"}, ControllerEnv(), "needs a value"},
        BadCase{{kEp, "--oxide-token=" + kToken}, ControllerEnv(), "OXIDE_TOKEN_FILE"},
        BadCase{{kEp, "--oxide-host=ftp://x"}, ControllerEnv(), "--oxide-host"},
        BadCase{{kEp, "--oxide-host=http://oxide.local"}, ControllerEnv(), "--oxide-insecure"},
        BadCase{{kEp, "--oxide-project=Bad_Name"}, ControllerEnv(), "--oxide-project"},
        BadCase{{kEp, "--instance-id=not-a-uuid"}, ControllerEnv(), "--instance-id"},
        BadCase{{kEp, "--metrics-address=9810"}, ControllerEnv(), "--metrics-address"},
        BadCase{{kEp, "--metrics-address=metrics.local:9810"}, ControllerEnv(), "not resolved"},
        BadCase{{kEp, "--mode=controller"},
                {{"OXIDE_TOKEN", kToken}, {"OXIDE_PROJECT", "p"}},
                "OXIDE_HOST"},
        BadCase{{kEp, "--mode=controller"},
                {{"OXIDE_HOST", "https://o"}, {"OXIDE_TOKEN", kToken}},
                "OXIDE_PROJECT"},
        BadCase{{kEp, "--mode=controller"},
                {{"OXIDE_HOST", "https://o"}, {"OXIDE_PROJECT", "p"}},
                "OXIDE_TOKEN"},
        BadCase{{kEp, "--mode=node"}, {{"OXIDE_INSTANCE_ID", "xyz"}}, "OXIDE_INSTANCE_ID"},
        BadCase{{kEp, "--mode=node", "--instance-id-source=env,imds"}, {}, "--instance-id-source"},
        BadCase{
            {kEp, "--mode=node", "--instance-id-source=env,file,env"}, {}, "--instance-id-source"},
        BadCase{{kEp, "--mode=node", "--instance-id-source="}, {}, "--instance-id-source"},
        BadCase{{kEp, "--mode=node", "--instance-id-source=env,,file"}, {}, "--instance-id-source"},
        BadCase{{kEp, "--mode=node"},
                {{"OXIDE_INSTANCE_ID_SOURCE", "kubernetes,cloud"}},
                "OXIDE_INSTANCE_ID_SOURCE"},
        BadCase{{kEp, "--mode=node"}, {{"NODE_NAME", "Node_1"}}, "--node-name"},
        BadCase{{kEp, "--mode=node"},
                {{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_SERVICE_PORT", "https"}},
                "KUBERNETES_SERVICE_PORT"},
        BadCase{{kEp, "--mode=node", "--kubernetes-timeout-seconds=0"},
                {},
                "--kubernetes-timeout-seconds"}));

TEST(Settings, ModesRequireOnlyTheirOwnSettings) {
  auto node = ParseCommandLine({kEp, "--mode=node"}, {{"OXIDE_INSTANCE_ID", kInstance}});
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_FALSE(node->settings.ServesController());
  EXPECT_TRUE(node->settings.ServesNode());
  Environment controller_only = ControllerEnv();
  controller_only.erase("OXIDE_INSTANCE_ID");
  auto controller = ParseCommandLine({kEp, "--mode=controller"}, controller_only);
  ASSERT_TRUE(controller.ok()) << controller.status().ToString();
  EXPECT_TRUE(controller->settings.ServesController());
  EXPECT_FALSE(controller->settings.ServesNode());
}

// The token file is only named here: the backend reads it at start (backend/client_config.h;
// its trimming and its errors are tested in test/backend/client_config_test.cc).
TEST(Settings, TheTokenFileIsNamedNotReadAndConflictsWithTheVariable) {
  Environment env = ControllerEnv();
  env.erase("OXIDE_TOKEN");
  env["OXIDE_TOKEN_FILE"] = "/nonexistent/token";
  auto parsed = ParseCommandLine({kEp}, env);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->settings.oxide_token, "");
  EXPECT_EQ(parsed->settings.oxide_token_file, "/nonexistent/token");  // watched while running
  EXPECT_TRUE(parsed->settings.oxide_token_file_from_env);

  auto flag = ParseCommandLine({kEp, "--oxide-token-file=/other/token"}, env);
  ASSERT_TRUE(flag.ok()) << flag.status().ToString();
  EXPECT_EQ(flag->settings.oxide_token_file, "/other/token");
  EXPECT_FALSE(flag->settings.oxide_token_file_from_env);

  env["OXIDE_TOKEN"] = kToken;
  auto both = ParseCommandLine({kEp}, env);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("only one of"), std::string::npos);
}

// No file is opened: a CA file that does not exist parses (the backend checks it at start).
TEST(Settings, TheCaFileIsNamedNotRead) {
  auto parsed = Parse({kEp, "--oxide-ca-file=/nonexistent/ca.pem"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->settings.oxide_ca_file, "/nonexistent/ca.pem");
  auto empty = Parse({kEp, "--oxide-ca-file="});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(), "invalid setting --oxide-ca-file: cannot read ");
  auto no_token_file = Parse({kEp, "--oxide-token-file="});
  ASSERT_FALSE(no_token_file.ok());
  EXPECT_EQ(no_token_file.status().message(),
            "invalid setting --oxide-token-file: cannot read the Oxide token file ");
}

// The node's instance id is resolved at node start (node/instance_identity.h); parsing only
// checks the settings, so a node with no source configured parses (and fails at start).
TEST(Settings, NodeNeedsNoInstanceIdToParse) {
  auto parsed = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->settings.instance_id, "");
}

TEST(Settings, InstanceIdSourcesDefaultToEnvFileKubernetesAndKeepTheGivenOrder) {
  using Source = InstanceIdSource;
  auto defaults = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->settings.instance_id_sources,
            (std::vector<Source>{Source::kEnv, Source::kFile, Source::kKubernetes}));
  auto flag = ParseCommandLine({kEp, "--mode=node", "--instance-id-source=kubernetes,env"},
                               {{"OXIDE_INSTANCE_ID_SOURCE", "file"}});
  ASSERT_TRUE(flag.ok()) << flag.status().ToString();
  EXPECT_EQ(flag->settings.instance_id_sources,
            (std::vector<Source>{Source::kKubernetes, Source::kEnv}));
  auto env = ParseCommandLine({kEp, "--mode=node"}, {{"OXIDE_INSTANCE_ID_SOURCE", "file"}});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_EQ(env->settings.instance_id_sources, (std::vector<Source>{Source::kFile}));

  auto duplicate = ParseCommandLine({kEp, "--mode=node", "--instance-id-source=file,file"}, {});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(duplicate.status().message().find("\"file\" is listed twice"), std::string::npos)
      << duplicate.status().message();
  auto unknown = ParseCommandLine({kEp, "--mode=node", "--instance-id-source=imds"}, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("env, file, kubernetes"), std::string::npos)
      << unknown.status().message();
}

TEST(Settings, KubernetesSourceSettingsFromTheEnvironment) {
  auto parsed = ParseCommandLine({kEp, "--mode=node", "--kubernetes-credentials-dir=/sa"},
                                 {{"NODE_NAME", "worker-1.example"},
                                  {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                  {"KUBERNETES_SERVICE_PORT", "6443"}});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Settings& s = parsed->settings;
  EXPECT_EQ(s.node_name, "worker-1.example");
  EXPECT_EQ(s.kubernetes_host, "10.96.0.1");
  EXPECT_EQ(s.kubernetes_port, "6443");
  EXPECT_EQ(s.kubernetes_credentials_dir, "/sa");
  EXPECT_EQ(s.kubernetes_timeout_seconds, 10);

  auto defaults = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->settings.kubernetes_credentials_dir,
            "/var/run/secrets/kubernetes.io/serviceaccount");
  EXPECT_EQ(defaults->settings.kubernetes_host, "");
  // A test setting: accepted, but not listed by --help.
  EXPECT_EQ(HelpText().find("--kubernetes-credentials-dir"), std::string::npos);
}

TEST(Settings, AttachLimitIsSetOutrightOrReservedFromTheComputedOne) {
  auto defaults = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(defaults.ok()) << defaults.status().ToString();
  EXPECT_EQ(defaults->settings.volume_attach_limit, 0);
  EXPECT_EQ(defaults->settings.reserved_volume_attachments, 0);
  auto limit = ParseCommandLine({kEp, "--mode=node", "--volume-attach-limit=5"}, {});
  ASSERT_TRUE(limit.ok()) << limit.status().ToString();
  EXPECT_EQ(limit->settings.volume_attach_limit, 5);
  auto older = ParseCommandLine({kEp, "--mode=node", "--max-volumes-per-node=7"}, {});
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_EQ(older->settings.volume_attach_limit, 7) << "the older name sets the same limit";
  auto reserved = ParseCommandLine({kEp, "--mode=node", "--reserved-volume-attachments=2"}, {});
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  EXPECT_EQ(reserved->settings.reserved_volume_attachments, 2);
  auto both = ParseCommandLine(
      {kEp, "--mode=node", "--volume-attach-limit=5", "--reserved-volume-attachments=2"}, {});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(both.status().message().find("--reserved-volume-attachments"), std::string::npos)
      << both.status().message();
  EXPECT_NE(both.status().message().find("--volume-attach-limit"), std::string::npos);
  for (const char* bad : {"--volume-attach-limit=13", "--volume-attach-limit=-1",
                          "--reserved-volume-attachments=12", "--reserved-volume-attachments=x"}) {
    auto refused = ParseCommandLine({kEp, "--mode=node", bad}, {});
    ASSERT_FALSE(refused.ok()) << bad;
    const std::string flag = std::string(bad).substr(0, std::string(bad).find('='));
    EXPECT_NE(refused.status().message().find(flag), std::string::npos)
        << refused.status().message();
  }
}

TEST(Settings, WaitForProviderIdFromTheFlagOrTheEnvironment) {
  auto defaults = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->settings.wait_for_provider_id);
  auto flag = ParseCommandLine({kEp, "--mode=node", "--wait-for-provider-id"}, {});
  ASSERT_TRUE(flag.ok()) << flag.status().ToString();
  EXPECT_TRUE(flag->settings.wait_for_provider_id);
  auto env = ParseCommandLine({kEp, "--mode=node"}, {{"OXIDE_CSI_WAIT_FOR_PROVIDER_ID", "true"}});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_TRUE(env->settings.wait_for_provider_id);
  auto off = ParseCommandLine({kEp, "--mode=node", "--wait-for-provider-id=false"},
                              {{"OXIDE_CSI_WAIT_FOR_PROVIDER_ID", "1"}});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->settings.wait_for_provider_id) << "the flag wins over the environment";
  auto bad = ParseCommandLine({kEp, "--mode=node"}, {{"OXIDE_CSI_WAIT_FOR_PROVIDER_ID", "yes"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--wait-for-provider-id"), std::string::npos);
  EXPECT_NE(bad.status().message().find("OXIDE_CSI_WAIT_FOR_PROVIDER_ID"), std::string::npos);
}

TEST(Settings, TheStartupTaintRemovalIsOnUnlessTurnedOff) {
  auto defaults = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->settings.remove_startup_taint);
  auto flag = ParseCommandLine({kEp, "--mode=node", "--remove-startup-taint=false"}, {});
  ASSERT_TRUE(flag.ok()) << flag.status().ToString();
  EXPECT_FALSE(flag->settings.remove_startup_taint);
  auto env = ParseCommandLine({kEp, "--mode=node"}, {{"OXIDE_CSI_REMOVE_STARTUP_TAINT", "false"}});
  ASSERT_TRUE(env.ok()) << env.status().ToString();
  EXPECT_FALSE(env->settings.remove_startup_taint);
  auto bad = ParseCommandLine({kEp, "--mode=node", "--remove-startup-taint=maybe"}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--remove-startup-taint"), std::string::npos)
      << bad.status().message();
}

TEST(Settings, JournalPruningCanBeTurnedOffForBenchmarksOnly) {
  auto defaults = ParseCommandLine({kEp, "--mode=node"}, {});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->settings.journal_prune);
  auto off = ParseCommandLine({kEp, "--mode=node", "--journal-prune=off"}, {});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->settings.journal_prune);
  auto bad = ParseCommandLine({kEp, "--mode=node", "--journal-prune=no"}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("must be on or off"), std::string::npos);
  EXPECT_EQ(HelpText().find("--journal-prune"), std::string::npos);
}

TEST(Settings, PlainHttpOnlyWhenInsecure) {
  auto parsed = Parse({kEp, "--oxide-host=http://127.0.0.1:8080/", "--oxide-insecure"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->settings.oxide_host, "http://127.0.0.1:8080");
  EXPECT_TRUE(parsed->settings.oxide_insecure);
}

TEST(Settings, MetricsAreOffUnlessAnAddressIsGiven) {
  auto off = Parse({kEp});
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->settings.serve_metrics);
  auto on = Parse({kEp, "--metrics-address=[::]:9810"});
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->settings.serve_metrics);
  EXPECT_EQ(on->settings.metrics_host, "::");
  EXPECT_EQ(on->settings.metrics_port, 9810);
}

}  // namespace
}  // namespace oxide
