// oxide-csi-ctl against the real plugin: text and JSON output, exit codes, bad usage.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

TEST(Cli, IdentityVerbsInTextAndJson) {
  PluginSetup setup("all");
  auto plugin = setup.Start();
  std::string endpoint = "--endpoint=unix://" + setup.socket_path();

  ProcessResult info = RunProgram(CtlBinary(), {endpoint, "identity", "info"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("name:           csi.oxide.computer"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find(std::string("vendor_version: ") + OXIDE_CSI_VERSION), std::string::npos);

  ProcessResult json = RunProgram(CtlBinary(), {endpoint, "--output", "json", "identity", "info"});
  EXPECT_EQ(json.exit_code, 0);
  auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["name"], "csi.oxide.computer");
  EXPECT_EQ(parsed["vendor_version"], OXIDE_CSI_VERSION);

  ProcessResult caps = RunProgram(CtlBinary(), {endpoint, "identity", "capabilities"});
  EXPECT_EQ(caps.exit_code, 0);
  EXPECT_NE(caps.out.find("service: CONTROLLER_SERVICE"), std::string::npos) << caps.out;
  EXPECT_NE(caps.out.find("service: VOLUME_ACCESSIBILITY_CONSTRAINTS"), std::string::npos);

  ProcessResult probe = RunProgram(CtlBinary(), {"identity", "probe"},
                                   {{"CSI_ENDPOINT", "unix://" + setup.socket_path()}});
  EXPECT_EQ(probe.exit_code, 0) << probe.err;
  EXPECT_EQ(probe.out, "ready: true\n");
}

TEST(Cli, FailedCallsExitOneWithTheCode) {
  PluginSetup setup("all");
  ProcessResult down = RunProgram(
      CtlBinary(), {"--endpoint", setup.socket_path(), "--timeout", "1", "identity", "probe"});
  EXPECT_EQ(down.exit_code, 1);
  EXPECT_NE(down.err.find("error: "), std::string::npos) << down.err;

  ProcessResult json = RunProgram(CtlBinary(), {"--endpoint", setup.socket_path(), "--output=json",
                                                "--timeout=1", "identity", "probe"});
  EXPECT_EQ(json.exit_code, 1);
  auto parsed = nlohmann::json::parse(json.out);
  EXPECT_TRUE(parsed["error"].contains("code"));
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunProgram(CtlBinary(), {"identity", "info"}).exit_code, 2);  // no endpoint
  EXPECT_EQ(RunProgram(CtlBinary(), {"--endpoint=/x.sock", "identity"}).exit_code, 2);
  EXPECT_EQ(RunProgram(CtlBinary(), {"--endpoint=/x.sock", "identity", "dance"}).exit_code, 2);
  EXPECT_EQ(RunProgram(CtlBinary(), {"--endpoint=tcp://h:1", "identity", "info"}).exit_code, 2);
  EXPECT_EQ(RunProgram(CtlBinary(), {"--output=yaml", "identity", "info"}).exit_code, 2);
  ProcessResult help = RunProgram(CtlBinary(), {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("identity probe"), std::string::npos);
}

}  // namespace
}  // namespace oxide::testing
