#include "backend_fixture.h"

#include <sys/wait.h>

#include "backend/curl_multi_transport.h"
#include "backend/retrying_transport.h"
#include "backend/token_retry_transport.h"

namespace backend_test {

void BackendTest::SetUp() {
  ASSERT_EQ(uv_loop_init(&loop_), 0);
  sim_ = std::make_unique<sim_test::SimProcess>(sim_args());
  ASSERT_TRUE(sim_->running());
  control_ = std::make_unique<sim_test::HttpClient>(sim_->base_url());
  Rebuild(DefaultConfig());
}

void BackendTest::TearDown() {
  client_.reset();
  uv_run(&loop_, UV_RUN_DEFAULT);  // lets the transports' handles close
  EXPECT_EQ(uv_loop_close(&loop_), 0) << "a uv handle was left open";
  control_.reset();
  if (sim_ && sim_->running()) {
    const int status = sim_->stop();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << sim_->stderr_text();
  }
}

ClientConfig BackendTest::DefaultConfig() const {
  ClientConfig config;
  config.project = "demo";
  config.transport.base_url = sim_->base_url();
  config.transport.token = sim_test::SimProcess::kToken;
  config.transport.default_timeout = std::chrono::seconds(10);
  config.retry.max_attempts = 3;
  config.retry.base_delay = std::chrono::milliseconds(20);
  config.retry.max_delay = std::chrono::milliseconds(200);
  config.retry.seed = 1;
  return config;
}

void BackendTest::Rebuild(const ClientConfig& config) {
  client_.reset();
  client_ = OxideClient::Create(&loop_, &clock_, config);
}

bool BackendTest::Busy() {
  if (loop_.active_reqs.count > 0) return true;  // worker-pool jobs, among others
  if (!client_) return false;
  HttpTransport* transport = &client_->transport();
  if (auto* refreshing = dynamic_cast<TokenRetryTransport*>(transport))
    transport = &refreshing->inner();
  if (auto* retrying = dynamic_cast<RetryingTransport*>(transport)) transport = &retrying->inner();
  auto* curl = dynamic_cast<CurlMultiTransport*>(transport);
  return curl != nullptr && curl->unanswered() > 0;
}

namespace {

// Runs the loop on the calling thread until `done()` or the wall-time guard `limit` passes. The
// tick timer only wakes the loop now and then so the guard is checked; nothing waits for it.
template <typename Done>
bool Drive(uv_loop_t* loop, std::chrono::milliseconds limit, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  uv_timer_t tick;
  uv_timer_init(loop, &tick);
  uv_timer_start(
      &tick, [](uv_timer_t*) {}, 10, 10);
  bool ok = true;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ok = false;
      break;
    }
    uv_run(loop, UV_RUN_ONCE);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&tick), nullptr);
  uv_run(loop, UV_RUN_NOWAIT);  // runs the close callback before `tick` goes out of scope
  return ok;
}

}  // namespace

bool BackendTest::RunUntilIdle(std::chrono::milliseconds limit) {
  // NOWAIT first: what is ready without waiting (a commit's answer, a 0 ms uv timer) runs before
  // the loop counts as idle.
  uv_run(&loop_, UV_RUN_NOWAIT);
  return Drive(&loop_, limit, [&] {
    if (Busy()) return false;
    uv_run(&loop_, UV_RUN_NOWAIT);
    return !Busy();
  });
}

bool BackendTest::RunUntil(const std::function<bool()>& finished, std::chrono::milliseconds limit) {
  return Drive(&loop_, limit, [&] {
    if (finished()) return true;
    // Idle and not finished: only a timer can move things on. Jump to it (none: wait for real
    // events, e.g. a sim-side change; the guard ends the wait). Bounded so the guard is checked
    // even if timers keep starting timers.
    for (int step = 0; step < 1000 && !Busy(); ++step) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      if (finished()) return true;
      if (Busy() || !clock_.AdvanceToNextTimer()) break;
      if (finished()) return true;
    }
    return false;
  });
}

bool BackendTest::RunWithoutTime(const std::function<bool()>& finished,
                                 std::chrono::milliseconds limit) {
  return Drive(&loop_, limit, finished);
}

void BackendTest::Elapse(std::chrono::milliseconds span) {
  const auto until = clock_.Now() + span;
  ASSERT_TRUE(RunUntilIdle());
  while (clock_.NextDue() && *clock_.NextDue() <= until) {
    clock_.AdvanceToNextTimer();
    ASSERT_TRUE(RunUntilIdle());
  }
  clock_.Advance(std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_.Now()));
  ASSERT_TRUE(RunUntilIdle());
}

Status BackendTest::AwaitStatus(const std::function<void(DoneStatus)>& call) {
  std::optional<Status> result;
  call([&](Status status) { result = std::move(status); });
  if (!RunUntil([&] { return result.has_value(); }))
    return Status(StatusCode::kDeadlineExceeded, "test timed out waiting for a callback");
  return *result;
}

StatusOr<Disk> BackendTest::CreateBlankDisk(const std::string& name, uint64_t gib) {
  DiskCreate create;
  create.name = name;
  create.description = "test disk";
  create.size = gib * kGiB;
  return Await<Disk>([&](Done<Disk> done) { client().CreateDisk(create, std::move(done)); });
}

StatusOr<Disk> BackendTest::GetDisk(const std::string& name_or_id) {
  return Await<Disk>([&](Done<Disk> done) { client().GetDisk(name_or_id, std::move(done)); });
}

std::string BackendTest::ControlInstance(const std::string& name, const std::string& run_state) {
  sim_test::Reply reply = control().post(
      "/__sim/instances", {{"project", "demo"}, {"name", name}, {"run_state", run_state}});
  EXPECT_EQ(reply.status, 201) << reply.body;
  return reply.json().value("id", "");
}

int BackendTest::CountRequests(const std::string& method, const std::string& operation) {
  sim_test::Reply reply = control().get("/__sim/requests");
  EXPECT_EQ(reply.status, 200) << reply.body;
  int count = 0;
  const nlohmann::json log = reply.json();  // a named value: the range must not dangle
  for (const auto& entry : log["requests"])
    count += entry.value("method", "") == method && entry.value("operation", "") == operation;
  return count;
}

void BackendTest::ClearRequestLog() {
  EXPECT_EQ(control().del("/__sim/requests").status, 200);
}

void BackendTest::SetFaults(const nlohmann::json& rules, int seed) {
  sim_test::Reply reply = control().put("/__sim/faults", {{"seed", seed}, {"rules", rules}});
  EXPECT_EQ(reply.status, 200) << reply.body;
}

void ExpectError(const Status& status, StatusCode code, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), code) << status.ToString();
  for (const auto& part : parts)
    EXPECT_NE(status.message().find(part), std::string::npos)
        << "missing \"" << part << "\" in: " << status.ToString();
}

}  // namespace backend_test
