// The token never appears in a Status message or a log record, whatever the error path.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "backend_fixture.h"
#include "util/log.h"

namespace backend_test {
namespace {

constexpr const char* kSecret = "oxide-token-supersecret-7f3a9c2e";

class SecretTest : public BackendTest {
 protected:
  std::vector<std::string> sim_args() const override { return {"--token", kSecret}; }
  void SetUp() override {
    log_path_ = testing::TempDir() + "/backend-secret-log-" + std::to_string(::getpid());
    log_fd_ = ::open(log_path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    oxide::log::Configure(oxide::log::Level::kDebug, oxide::log::Format::kText);
    oxide::log::SetOutputFd(log_fd_);  // the secret is deliberately NOT registered
    BackendTest::SetUp();
    control().set_token(std::string(kSecret));
    ClientConfig config = DefaultConfig();
    config.transport.token = kSecret;
    config.transport.default_timeout = std::chrono::milliseconds(300);
    Rebuild(config);
  }
  void TearDown() override {
    BackendTest::TearDown();
    oxide::log::SetOutputFd(2);
    ::close(log_fd_);
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_FALSE(text.str().empty());
    EXPECT_EQ(text.str().find(kSecret), std::string::npos) << text.str();
    ::unlink(log_path_.c_str());
  }
  void Check(const Status& status, StatusCode code) {
    EXPECT_EQ(status.code(), code) << status.ToString();
    EXPECT_EQ(status.message().find(kSecret), std::string::npos) << status.ToString();
    EXPECT_EQ(status.message().find("supersecret"), std::string::npos) << status.ToString();
    ++checked_;
  }
  std::string log_path_;
  int log_fd_ = -1;
  int checked_ = 0;
};

TEST_F(SecretTest, NoErrorPathCarriesTheToken) {
  ASSERT_TRUE(CreateBlankDisk("pv-a").ok());
  Check(CreateBlankDisk("pv-a").status(), StatusCode::kAlreadyExists);
  Check(GetDisk("pv-missing").status(), StatusCode::kNotFound);
  Check(CreateBlankDisk("Bad").status(), StatusCode::kInvalidArgument);
  Check(CreateBlankDisk("pv-big", 5000).status(), StatusCode::kOutOfRange);
  ControlInstance("node-1", "running");
  Check(Await<Disk>([&](Done<Disk> d) { client().AttachDisk("node-1", "pv-a", d); }).status(),
        StatusCode::kFailedPrecondition);
  SetFaults({{{"operation", "disk_view"}, {"error_503", 1.0}},
             {{"operation", "disk_list"}, {"error_429", 1.0}, {"retry_after_s", 0}},
             {{"operation", "snapshot_view"}, {"drop", 1.0}},
             {{"operation", "instance_view"}, {"latency_ms", 1000}},
             {{"operation", "snapshot_list"}, {"error_500", 1.0}}});
  Check(GetDisk("pv-a").status(), StatusCode::kUnavailable);
  Check(Await<Page<Disk>>([&](Done<Page<Disk>> d) { client().ListDisks({}, d); }).status(),
        StatusCode::kUnavailable);
  Check(Await<Snapshot>([&](Done<Snapshot> d) { client().GetSnapshot("s", d); }).status(),
        StatusCode::kUnavailable);
  Check(Await<Instance>([&](Done<Instance> d) { client().GetInstance("node-1", d); }).status(),
        StatusCode::kDeadlineExceeded);
  Check(Await<Page<Snapshot>>([&](Done<Page<Snapshot>> d) {
          client().ListSnapshots({}, d);
        }).status(),
        StatusCode::kUnavailable);
  ClientConfig wrong = DefaultConfig();
  wrong.transport.token = std::string(kSecret) + "-wrong";
  Rebuild(wrong);
  Check(Await<CurrentUser>([&](Done<CurrentUser> d) { client().GetCurrentUser(d); }).status(),
        StatusCode::kUnauthenticated);
  sim().kill_hard();
  Check(GetDisk("pv-a").status(), StatusCode::kUnavailable);
  EXPECT_EQ(checked_, 12);
}

// A transport that answers with a body echoing the token: the client scrubs it.
class EchoTransport : public HttpTransport {
 public:
  void Send(HttpRequest, HttpCallback done) override {
    HttpResponse response;
    response.status = 400;
    response.body = nlohmann::json({{"message", std::string("bad token ") + kSecret}}).dump();
    done(std::move(response));
  }
};

TEST(SecretScrub, AnEchoedTokenIsScrubbed) {
  OxideClient client(std::make_unique<EchoTransport>(), "demo", kSecret);
  std::optional<Status> result;
  client.Ping([&](Status status) { result = status; });
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(result->message().find(kSecret), std::string::npos) << result->ToString();
  EXPECT_NE(result->message().find("[REDACTED]"), std::string::npos) << result->ToString();
}

// Each Oxide call gets a debug record (without the token, as TearDown checks); below debug level
// none is written, and none is built.
TEST_F(SecretTest, EachOxideCallIsLoggedAtDebugLevelOnly) {
  auto records = [&] {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    const std::string log = text.str();
    int count = 0;
    for (size_t at = log.find("oxide api call"); at != std::string::npos;
         at = log.find("oxide api call", at + 1))
      ++count;
    return count;
  };
  const int before = records();
  EXPECT_EQ(GetDisk("pv-missing").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(records(), before + 1);
  oxide::log::Configure(oxide::log::Level::kInfo, oxide::log::Format::kText);
  EXPECT_EQ(GetDisk("pv-missing").status().code(), StatusCode::kNotFound);
  oxide::log::Configure(oxide::log::Level::kDebug, oxide::log::Format::kText);
  EXPECT_EQ(records(), before + 1);
}

}  // namespace
}  // namespace backend_test
