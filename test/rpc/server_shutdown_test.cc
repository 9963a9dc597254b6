// Graceful shutdown of the CSI server in-process: calls in flight finish within the grace period,
// new calls are refused, and the socket is removed. The real CsiServer and EventLoop on a real
// socket, with a Probe handler that answers late (the process-level tests, SIGTERM to the real
// binary, are in test/integration/shutdown_test.cc).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <uv.h>

#include <atomic>
#include <thread>

#include "csi.grpc.pb.h"
#include "loop/event_loop.h"
#include "rpc/csi_server.h"
#include "support/plugin_process.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace oxide::testing {
namespace {

using namespace std::chrono_literals;

bool Exists(const std::string& path) {
  struct stat info {};
  return lstat(path.c_str(), &info) == 0;
}

// Answers every Probe after `delay` on a loop timer (or never, for a negative delay).
class SlowProbe {
 public:
  SlowProbe(EventLoop* loop, std::chrono::milliseconds delay) : loop_(loop), delay_(delay) {}

  void Install(rpc::CsiHandlers& handlers) {
    handlers.Probe = [this](const rpc::CallInfo&, const csi::v1::ProbeRequest&,
                            rpc::Reply<csi::v1::ProbeResponse> reply) {
      ++started;
      if (delay_.count() < 0) {
        held_.push_back(std::move(reply));
        return;
      }
      auto* timer = new uv_timer_t;
      timer->data = new Pending{std::move(reply), &answered};
      uv_timer_init(loop_->uv(), timer);
      uv_timer_start(
          timer,
          [](uv_timer_t* t) {
            auto* pending = static_cast<Pending*>(t->data);
            csi::v1::ProbeResponse response;
            response.mutable_ready()->set_value(true);
            ++*pending->answered;
            pending->reply.Ok(response);
            delete pending;
            uv_close(reinterpret_cast<uv_handle_t*>(t),
                     [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
          },
          static_cast<uint64_t>(delay_.count()), 0);
    };
  }
  void DropHeld() { held_.clear(); }

  std::atomic<int> started{0};
  std::atomic<int> answered{0};  // answers sent (on the loop thread, as they are sent)

 private:
  struct Pending {
    rpc::Reply<csi::v1::ProbeResponse> reply;
    std::atomic<int>* answered;
  };

  EventLoop* loop_;
  std::chrono::milliseconds delay_;
  std::vector<rpc::Reply<csi::v1::ProbeResponse>> held_;
};

struct InProcessServer {
  explicit InProcessServer(std::chrono::milliseconds probe_delay) : probe(&loop, probe_delay) {
    rpc::CsiHandlers handlers;
    probe.Install(handlers);
    server = std::make_unique<rpc::CsiServer>(&loop, std::move(handlers));
    Status started = server->Start({.socket_path = dir.File("csi.sock")});
    EXPECT_TRUE(started.ok()) << started.ToString();
    thread = std::thread([this] { loop.Run(); });
  }
  ~InProcessServer() {
    if (thread.joinable()) thread.join();
  }
  // Starts the shutdown on the loop thread: `shutting_down` becomes true once it has begun
  // (new calls are refused from then on), `stopped` when it is complete.
  void Shutdown(std::chrono::milliseconds grace) {
    loop.Post([this, grace] {
      server->Shutdown(grace, [this] {
        probe.DropHeld();
        answered_when_stopped = probe.answered.load();
        stopped = true;
        loop.Stop();
      });
      shutting_down = true;
    });
  }
  std::string socket() const { return dir.File("csi.sock"); }

  TempDir dir;
  EventLoop loop;
  SlowProbe probe;
  std::unique_ptr<rpc::CsiServer> server;
  std::thread thread;
  std::atomic<bool> shutting_down{false};
  std::atomic<bool> stopped{false};
  std::atomic<int> answered_when_stopped{-1};
};

grpc::Status CallProbe(const std::string& socket, std::chrono::seconds deadline = 10s) {
  auto stub = csi::v1::Identity::NewStub(UnixChannel(socket));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  csi::v1::ProbeResponse response;
  return stub->Probe(&context, {}, &response);
}

TEST(Shutdown, ACallInFlightFinishesBeforeTheServerStops) {
  InProcessServer server(400ms);
  grpc::Status in_flight_status;
  std::thread caller([&] { in_flight_status = CallProbe(server.socket()); });
  EXPECT_TRUE(WaitUntil([&] { return server.probe.started > 0; }));
  auto begin = std::chrono::steady_clock::now();
  server.Shutdown(30s);
  caller.join();
  EXPECT_TRUE(in_flight_status.ok()) << in_flight_status.error_message();
  server.thread.join();
  EXPECT_TRUE(server.stopped);
  // Both on the loop thread: the answer was sent before the shutdown completed.
  EXPECT_EQ(server.answered_when_stopped, 1) << "must wait for the call in flight";
  // The shutdown ends with the last call (0.4 s), not at the grace: the bound only tells the
  // two apart, far from either.
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 15s) << "must not wait for the 30 s grace";
  EXPECT_FALSE(Exists(server.socket())) << "the socket must be removed";
}

TEST(Shutdown, NewCallsAreRefusedOnceShutdownBegins) {
  InProcessServer server(600ms);
  std::thread caller([&] { EXPECT_TRUE(CallProbe(server.socket()).ok()); });
  EXPECT_TRUE(WaitUntil([&] { return server.probe.started > 0; }));
  server.Shutdown(5s);
  EXPECT_TRUE(WaitUntil([&] { return server.shutting_down.load(); }));
  grpc::Status late = CallProbe(server.socket(), 2s);
  EXPECT_FALSE(late.ok());
  EXPECT_EQ(server.probe.started, 1) << "no handler may run for a call after shutdown began";
  caller.join();
}

TEST(Shutdown, TheGracePeriodBoundsACallThatNeverEnds) {
  InProcessServer server(-1ms);
  std::thread caller([&] {
    grpc::Status status = CallProbe(server.socket());
    EXPECT_FALSE(status.ok());
  });
  EXPECT_TRUE(WaitUntil([&] { return server.probe.started > 0; }));
  auto begin = std::chrono::steady_clock::now();
  server.Shutdown(300ms);
  server.thread.join();
  auto took = std::chrono::steady_clock::now() - begin;
  EXPECT_TRUE(server.stopped);
  // What is under test is a duration: not before the grace ends, and then at once (the upper
  // bound is far from both the grace and a call left to run forever).
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 10s);
  caller.join();
}

}  // namespace
}  // namespace oxide::testing
