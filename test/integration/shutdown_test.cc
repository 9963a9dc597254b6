// Graceful shutdown of the real binary: SIGTERM under load and with an idle client connection;
// the process exits 0 and removes its socket. (The server's own shutdown, in-process, is in
// test/rpc/server_shutdown_test.cc.)
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <thread>

#include "csi.grpc.pb.h"
#include "support/plugin_setup.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;

// Under constant load, calls before SIGTERM all succeed; calls racing the shutdown may be refused
// (UNAVAILABLE) or, when they reach gRPC in the instant it stops, CANCELLED — both are
// retryable for a CO — but never fail any other way. Then the process exits 0, socket removed.
TEST(Shutdown, SigtermUnderLoadExitsZeroAndRemovesTheSocket) {
  PluginSetup setup("all");
  auto plugin = setup.Start();
  std::atomic<bool> stop{false};
  std::atomic<bool> signalled{false};
  std::atomic<int> ok{0}, failed_before_signal{0}, other{0};
  std::vector<std::thread> callers;
  auto channel = UnixChannel(setup.socket_path());
  for (int t = 0; t < 8; ++t) {
    callers.emplace_back([&] {
      auto stub = csi::v1::Identity::NewStub(channel);
      while (!stop) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 2s);
        csi::v1::ProbeResponse response;
        grpc::Status status = stub->Probe(&context, {}, &response);
        if (status.ok()) {
          ++ok;
          continue;
        }
        if (!signalled) ++failed_before_signal;  // failed before SIGTERM was even sent
        if (status.error_code() != grpc::StatusCode::UNAVAILABLE &&
            status.error_code() != grpc::StatusCode::CANCELLED) {
          ++other;
          ADD_FAILURE() << "unexpected status " << status.error_code() << ": "
                        << status.error_message();
        }
      }
    });
  }
  WaitUntil([&] { return ok.load() >= 50; }, 10s);  // under load (checked below: ok_before > 0)
  int ok_before = ok.load();
  signalled = true;
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(10s), 0) << plugin->Log();
  stop = true;
  for (auto& caller : callers)
    caller.join();
  EXPECT_GT(ok_before, 0);
  EXPECT_EQ(failed_before_signal.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_FALSE(std::filesystem::exists(setup.socket_path()));
  EXPECT_NE(plugin->Log().find("exited cleanly"), std::string::npos);
}

TEST(Shutdown, AnIdleClientConnectionDoesNotHoldTheShutdown) {
  PluginSetup setup("all");
  setup.args.push_back("--shutdown-grace-seconds=30");
  auto plugin = setup.Start();
  auto channel = UnixChannel(setup.socket_path());
  auto stub = csi::v1::Identity::NewStub(channel);  // keeps a connection open, like kubelet
  grpc::ClientContext context;
  csi::v1::ProbeResponse response;
  ASSERT_TRUE(stub->Probe(&context, {}, &response).ok());
  auto begin = std::chrono::steady_clock::now();
  plugin->Signal(SIGTERM);
  EXPECT_EQ(plugin->WaitExit(10s), 0);
  // Far from the 30 s grace, which is what it tells apart.
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 15s) << "must not wait for the 30 s grace";
}

}  // namespace
}  // namespace oxide::testing
