// The CSI socket: stale sockets replaced, live ones refused, other files never touched, mode
// 0660 by default, and nothing but the socket created in its directory.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>

#include "csi.grpc.pb.h"
#include "support/plugin_setup.h"

namespace oxide::testing {
namespace {

// Leaves a socket file behind with nobody listening, as a crashed plugin does.
void MakeStaleSocket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  close(fd);
}

bool ProbeOk(const std::string& socket_path) {
  auto stub = csi::v1::Identity::NewStub(UnixChannel(socket_path));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  csi::v1::ProbeResponse response;
  return stub->Probe(&context, {}, &response).ok();
}

std::vector<std::string> DirectoryEntries(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

TEST(Endpoint, SocketHasMode0660AndIsAloneInItsDirectory) {
  PluginSetup setup("all");
  auto plugin = setup.Start();
  struct stat info {};
  ASSERT_EQ(lstat(setup.socket_path().c_str(), &info), 0);
  EXPECT_TRUE(S_ISSOCK(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0660u);
  EXPECT_EQ(DirectoryEntries(setup.socket_dir()), std::vector<std::string>{"csi.sock"});
}

TEST(Endpoint, SocketModeFlag) {
  PluginSetup setup("node");
  setup.args.push_back("--socket-mode=0600");
  auto plugin = setup.Start();
  struct stat info {};
  ASSERT_EQ(lstat(setup.socket_path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST(Endpoint, PlainPathAndEnvironmentVariableForms) {
  PluginSetup setup("node");
  setup.args.erase(setup.args.begin());  // drop --endpoint
  setup.env["CSI_ENDPOINT"] = setup.socket_path();
  auto plugin = setup.Start();
  EXPECT_TRUE(ProbeOk(setup.socket_path()));
}

TEST(Endpoint, AStaleSocketIsReplaced) {
  PluginSetup setup("node");
  MakeStaleSocket(setup.socket_path());
  auto plugin = setup.Start();
  EXPECT_TRUE(ProbeOk(setup.socket_path()));
  EXPECT_NE(plugin->Log().find("replaced a stale socket"), std::string::npos);
}

TEST(Endpoint, ASocketServedByALiveProcessIsRefused) {
  PluginSetup setup("node");
  auto first = setup.Start();
  PluginSetup second_setup("node");
  std::vector<std::string> args = second_setup.args;
  args[0] = "--endpoint=unix://" + setup.socket_path();
  ProcessResult second = RunProgram(PluginBinary(), args, second_setup.env);
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("another process is serving " + setup.socket_path()), std::string::npos)
      << second.err;
  EXPECT_TRUE(ProbeOk(setup.socket_path())) << "the first plugin must keep serving";
}

TEST(Endpoint, AFileThatIsNotASocketIsNeverReplaced) {
  PluginSetup setup("node");
  WriteFile(setup.socket_path(), "precious");
  ProcessResult result = RunProgram(PluginBinary(), setup.args, setup.env);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("is not a socket"), std::string::npos) << result.err;
  EXPECT_EQ(ReadFile(setup.socket_path()), "precious");
}

TEST(Endpoint, AMissingSocketDirectoryIsAClearError) {
  PluginSetup setup("node");
  setup.args[0] = "--endpoint=unix://" + setup.File("nowhere/csi.sock");
  ProcessResult result = RunProgram(PluginBinary(), setup.args, setup.env);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("does not exist"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace oxide::testing
