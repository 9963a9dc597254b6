// The curl multi transport on the loop: the in-flight cap with its FIFO queue, keep-alive reuse,
// and a loop that never blocks while many slow requests run.
#include <algorithm>
#include <chrono>

#include "backend/curl_multi_transport.h"
#include "backend/retrying_transport.h"
#include "backend_fixture.h"

namespace backend_test {
namespace {

using Clock = std::chrono::steady_clock;

class TransportTest : public BackendTest {
 protected:
  // Builds the production stack by hand so the test can read the curl transport's counters.
  CurlMultiTransport* BuildWith(TransportOptions options) {
    client_.reset();
    auto curl = std::make_unique<CurlMultiTransport>(loop(), options);
    CurlMultiTransport* raw = curl.get();
    auto retrying =
        std::make_unique<RetryingTransport>(&clock(), std::move(curl), DefaultConfig().retry);
    client_ = std::make_unique<OxideClient>(std::move(retrying), "demo", options.token);
    return raw;
  }

  // Sends `count` disk GETs at once; returns the order of completion and the elapsed time.
  std::vector<int> GetMany(int count, std::chrono::milliseconds* elapsed) {
    std::vector<int> order;
    const auto start = Clock::now();
    for (int i = 0; i < count; ++i)
      client().GetDisk("pv-" + std::to_string(i), [&order, i](StatusOr<Disk> disk) {
        EXPECT_EQ(disk.status().code(), StatusCode::kNotFound) << disk.status().ToString();
        order.push_back(i);
      });
    EXPECT_TRUE(RunUntil([&] { return static_cast<int>(order.size()) == count; }));
    *elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    return order;
  }
};

TEST_F(TransportTest, InFlightCapQueuesInFifoOrder) {
  SetFaults({{{"operation", "disk_view"}, {"latency_ms", 100}}});
  TransportOptions options = DefaultConfig().transport;
  options.max_in_flight = 2;
  CurlMultiTransport* curl = BuildWith(options);
  std::chrono::milliseconds elapsed{};
  const std::vector<int> order = GetMany(10, &elapsed);
  // Two at a time, oldest first: request i finishes in round i / 2.
  ASSERT_EQ(order.size(), 10U);
  for (size_t i = 0; i < order.size(); ++i)
    EXPECT_EQ(order[i] / 2, static_cast<int>(i) / 2) << "position " << i;
  EXPECT_GE(elapsed, std::chrono::milliseconds(490));  // 5 rounds of 100 ms
  EXPECT_EQ(curl->max_in_flight_seen(), 2U);
  EXPECT_EQ(curl->in_flight(), 0U);
  EXPECT_EQ(curl->queued(), 0U);
}

TEST_F(TransportTest, WithoutTheCapTheSameRequestsRunTogether) {
  SetFaults({{{"operation", "disk_view"}, {"latency_ms", 100}}});
  CurlMultiTransport* curl = BuildWith(DefaultConfig().transport);
  std::chrono::milliseconds elapsed{};
  GetMany(10, &elapsed);
  EXPECT_LT(elapsed, std::chrono::milliseconds(450));
  EXPECT_EQ(curl->max_in_flight_seen(), 10U);
}

TEST_F(TransportTest, SequentialRequestsReuseOneConnection) {
  CurlMultiTransport* curl = BuildWith(DefaultConfig().transport);
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(GetDisk("pv-x").status().code(), StatusCode::kNotFound);
  EXPECT_GE(curl->connections_opened(), 1U);
  EXPECT_LE(curl->connections_opened(), 2U);
}

// One easy handle (in-flight cap 1) carries every kind of request in turn, its options kept
// between transfers: each must go out with its own method and body, none with the last one's.
// Creates reuse the kept-alive connection like the rest.
TEST_F(TransportTest, OneHandleCarriesEveryKindOfRequestInTurnOverOneConnection) {
  TransportOptions options = DefaultConfig().transport;
  options.max_in_flight = 1;
  CurlMultiTransport* curl = BuildWith(options);
  const std::string node = ControlInstance("node-1", "stopped");
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ClearRequestLog();
    auto made = CreateBlankDisk("pv-a");
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    auto attached =
        Await<Disk>([&](Done<Disk> done) { client().AttachDisk(node, "pv-a", std::move(done)); });
    ASSERT_TRUE(attached.ok()) << attached.status().ToString();
    EXPECT_EQ(GetDisk("pv-a")->state.status,
              oxide::backend::DiskStatus::kAttached);  // a GET after a POST with a body
    auto detached =
        Await<Disk>([&](Done<Disk> done) { client().DetachDisk(node, "pv-a", std::move(done)); });
    ASSERT_TRUE(detached.ok()) << detached.status().ToString();
    ASSERT_TRUE(AwaitStatus([&](DoneStatus done) { client().DeleteDisk("pv-a", done); }).ok());
    EXPECT_EQ(GetDisk("pv-a").status().code(), StatusCode::kNotFound);  // a GET after a DELETE
    EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
    EXPECT_EQ(CountRequests("POST", "instance_disk_attach"), 1);
    EXPECT_EQ(CountRequests("POST", "instance_disk_detach"), 1);
    EXPECT_EQ(CountRequests("DELETE", "disk_delete"), 1);
    EXPECT_EQ(CountRequests("GET", "disk_view"), 2);
  }
  EXPECT_EQ(curl->connections_opened(), 1U);
}

// A connection idling in libcurl's pool stays armed for reading, so reusing it costs no
// epoll_ctl; when the server closes it, the loop must not keep waking up for the closed socket,
// and the next request must open a new connection and succeed.
class IdleTimeoutTransportTest : public TransportTest {
 public:
  std::vector<std::string> sim_args() const override { return {"--idle-timeout-s", "1"}; }
};

TEST_F(IdleTimeoutTransportTest, AConnectionTheServerClosesWhileIdleIsReplacedWithoutSpinning) {
  CurlMultiTransport* curl = BuildWith(DefaultConfig().transport);
  EXPECT_EQ(GetDisk("pv-x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(curl->connections_opened(), 1U);
  EXPECT_EQ(curl->idle_connections_armed(), 1U);

  uv_check_t turns_counter;
  uv_check_init(loop(), &turns_counter);
  static int turns = 0;
  turns = 0;
  uv_check_start(&turns_counter, [](uv_check_t*) { ++turns; });
  const auto until = Clock::now() + std::chrono::milliseconds(2500);  // the sim closes at ~1 s
  RunUntil([&] { return Clock::now() >= until; }, std::chrono::seconds(5));
  uv_close(reinterpret_cast<uv_handle_t*>(&turns_counter), nullptr);
  uv_run(loop(), UV_RUN_NOWAIT);
  // RunUntil's own 10 ms tick makes ~250 turns; a socket left armed after the server closed it
  // would make tens of thousands.
  EXPECT_LT(turns, 1000) << "the loop kept waking up for the closed connection";
  EXPECT_EQ(curl->idle_connections_armed(), 0U) << "the closed connection is still watched";

  EXPECT_EQ(GetDisk("pv-x").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(curl->connections_opened(), 2U);
}

TEST_F(TransportTest, ConnectionsPerHostAreCapped) {
  SetFaults({{{"operation", "disk_view"}, {"latency_ms", 100}}});
  TransportOptions options = DefaultConfig().transport;
  options.max_host_connections = 4;
  CurlMultiTransport* curl = BuildWith(options);
  std::chrono::milliseconds elapsed{};
  GetMany(12, &elapsed);
  EXPECT_LE(curl->connections_opened(), 4U);
  EXPECT_GE(elapsed, std::chrono::milliseconds(290));  // 3 rounds of 4
}

TEST_F(TransportTest, TheLoopNeverBlocksWhileManySlowRequestsRun) {
  SetFaults({{{"operation", "disk_view"}, {"latency_ms", 200}}});
  BuildWith(DefaultConfig().transport);
  struct Ticker {
    Clock::time_point last = Clock::now();
    Clock::duration max_gap{};
  } ticker;
  uv_timer_t timer;
  uv_timer_init(loop(), &timer);
  timer.data = &ticker;
  uv_timer_start(
      &timer,
      [](uv_timer_t* t) {
        auto* k = static_cast<Ticker*>(t->data);
        const auto now = Clock::now();
        k->max_gap = std::max(k->max_gap, now - k->last);
        k->last = now;
      },
      1, 1);
  std::chrono::milliseconds elapsed{};
  GetMany(100, &elapsed);
  uv_close(reinterpret_cast<uv_handle_t*>(&timer), nullptr);
  uv_run(loop(), UV_RUN_NOWAIT);
  const auto max_gap = std::chrono::duration_cast<std::chrono::milliseconds>(ticker.max_gap);
  EXPECT_LT(max_gap, std::chrono::milliseconds(50)) << "the loop stalled";
  EXPECT_LT(elapsed, std::chrono::seconds(3));  // 32 connections: ~4 rounds of 200 ms
}

}  // namespace
}  // namespace backend_test
