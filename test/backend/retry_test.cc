// Retries against oxide-sim's fault injection, counted in its request log: idempotent requests
// are retried on 503/429 (honouring Retry-After), timeouts and connection errors; creates are
// sent exactly once; attach/detach are retried (Oxide makes them idempotent). The waits between
// attempts are timers on the fixture's ManualClock: the tests check the delays asked for and the
// clock time that passed, never wall time.
#include <chrono>
#include <vector>

#include "backend_fixture.h"

namespace backend_test {
namespace {

using RetryTest = BackendTest;
using std::chrono::milliseconds;

TEST_F(RetryTest, GetIsRetriedOn503ThenUnavailable) {
  ASSERT_TRUE(CreateBlankDisk("pv-a").ok());
  SetFaults({{{"operation", "disk_view"}, {"error_503", 1.0}}});
  ClearRequestLog();
  ExpectError(GetDisk("pv-a").status(), StatusCode::kUnavailable,
              {"Service Unavailable", "after 3 attempts", "(oxide request id "});
  EXPECT_EQ(CountRequests("GET", "disk_view"), 3);
  // Equal-jitter backoff from the 20 ms base: [10, 20] ms, then [20, 40] ms.
  const std::vector<milliseconds>& delays = clock().delays_started();
  ASSERT_EQ(delays.size(), 2u);
  EXPECT_GE(delays[0], milliseconds(10));
  EXPECT_LE(delays[0], milliseconds(20));
  EXPECT_GE(delays[1], milliseconds(20));
  EXPECT_LE(delays[1], milliseconds(40));
  EXPECT_EQ(clock().elapsed(), delays[0] + delays[1]) << "no attempt ran before its delay";
}

TEST_F(RetryTest, GetSucceedsThroughTransient503s) {
  ClientConfig config = DefaultConfig();
  config.retry.max_attempts = 12;
  Rebuild(config);
  ASSERT_TRUE(CreateBlankDisk("pv-a").ok());
  SetFaults({{{"operation", "disk_view"}, {"error_503", 0.5}}}, 7);
  ClearRequestLog();
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(GetDisk("pv-a").ok()) << i;
  EXPECT_GT(CountRequests("GET", "disk_view"), 20);  // some were retried
}

TEST_F(RetryTest, RetryAfterIsHonoured) {
  ClientConfig config = DefaultConfig();
  config.retry.max_attempts = 2;
  Rebuild(config);
  SetFaults({{{"operation", "disk_view"}, {"error_429", 1.0}, {"retry_after_s", 1}}});
  ClearRequestLog();
  ExpectError(GetDisk("pv-a").status(), StatusCode::kUnavailable,
              {"Too Many Requests", "after 2 attempts"});
  // The server's 1 s, not the 20 ms base delay.
  EXPECT_EQ(clock().delays_started(), std::vector<milliseconds>{milliseconds(1000)});
  EXPECT_EQ(clock().elapsed(), milliseconds(1000));
  EXPECT_EQ(CountRequests("GET", "disk_view"), 2);
}

TEST_F(RetryTest, RetryAfterBeyondTheLimitIsNotWaitedFor) {
  ClientConfig config = DefaultConfig();
  config.retry.max_retry_after = std::chrono::milliseconds(500);
  Rebuild(config);
  SetFaults({{{"operation", "disk_view"}, {"error_429", 1.0}, {"retry_after_s", 5}}});
  ClearRequestLog();
  ExpectError(GetDisk("pv-a").status(), StatusCode::kUnavailable, {"Too Many Requests"});
  EXPECT_EQ(CountRequests("GET", "disk_view"), 1);
  EXPECT_TRUE(clock().delays_started().empty()) << "no retry was scheduled";
}

TEST_F(RetryTest, CreateIsNeverRepeatedOn503) {
  SetFaults({{{"operation", "disk_create"}, {"error_503", 1.0}}});
  ClearRequestLog();
  ExpectError(CreateBlankDisk("pv-a").status(), StatusCode::kUnavailable,
              {"create disk \"pv-a\"", "Service Unavailable"});
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
  EXPECT_TRUE(clock().delays_started().empty()) << "no retry was scheduled";
}

TEST_F(RetryTest, CreateWhoseAnswerIsLostIsNotRepeatedEvenOnAReusedConnection) {
  ASSERT_TRUE(AwaitStatus([&](DoneStatus d) { client().Ping(d); }).ok());  // warm connection
  SetFaults({{{"operation", "disk_create"}, {"drop", 1.0}}});
  ClearRequestLog();
  ExpectError(CreateBlankDisk("pv-a").status(), StatusCode::kUnavailable,
              {"create disk \"pv-a\"", "cannot reach the Oxide API"});
  EXPECT_EQ(CountRequests("POST", "disk_create"), 1);
  // The outcome was unknown to the client; the disk exists, as a lookup shows.
  EXPECT_TRUE(GetDisk("pv-a").ok());
}

TEST_F(RetryTest, AttachIsRetriedBecauseOxideMakesItIdempotent) {
  ControlInstance("node-1", "stopped");
  ASSERT_TRUE(CreateBlankDisk("pv-a").ok());
  SetFaults({{{"operation", "instance_disk_attach"}, {"drop", 1.0}}});
  ClearRequestLog();
  auto lost =
      Await<Disk>([&](Done<Disk> done) { client().AttachDisk("node-1", "pv-a", std::move(done)); });
  ExpectError(lost.status(), StatusCode::kUnavailable, {"after 3 attempts"});
  // 3 attempts; libcurl itself may add one silent resend when the first went out on a reused
  // connection (allowed for a request we declare idempotent).
  EXPECT_GE(CountRequests("POST", "instance_disk_attach"), 3);
  EXPECT_LE(CountRequests("POST", "instance_disk_attach"), 4);
  SetFaults(nlohmann::json::array());
  // The first attempt took effect; the repeat answers 202 with the same disk.
  auto again =
      Await<Disk>([&](Done<Disk> done) { client().AttachDisk("node-1", "pv-a", std::move(done)); });
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->state.status, oxide::backend::DiskStatus::kAttached);
}

TEST_F(RetryTest, ConnectionRefusedIsUnavailableAfterRetries) {
  sim().kill_hard();
  ExpectError(GetDisk("pv-a").status(), StatusCode::kUnavailable,
              {"get disk \"pv-a\"", "cannot reach the Oxide API", "after 3 attempts"});
  // Two backoff waits, the second longer than the first's lower bound (they doubled).
  const std::vector<milliseconds>& delays = clock().delays_started();
  ASSERT_EQ(delays.size(), 2u);
  EXPECT_LE(delays[0], milliseconds(20));
  EXPECT_GE(delays[1], milliseconds(20));
  EXPECT_LE(delays[1], milliseconds(40));
}

TEST_F(RetryTest, PerRequestTimeoutIsDeadlineExceeded) {
  ClientConfig config = DefaultConfig();
  config.transport.default_timeout = std::chrono::milliseconds(200);
  config.retry.max_attempts = 2;
  Rebuild(config);
  SetFaults({{{"operation", "disk_view"}, {"latency_ms", 1500}}});
  // Each attempt ends by curl's own 200 ms timeout (real time: curl drives it), not by the
  // 1.5 s answer; the message says so. Between them one backoff wait on the clock.
  ExpectError(GetDisk("pv-a").status(), StatusCode::kDeadlineExceeded,
              {"did not answer in time", "after 2 attempts"});
  EXPECT_EQ(clock().delays_started().size(), 1u);
}

}  // namespace
}  // namespace backend_test
