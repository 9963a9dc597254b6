// Token rotation without a restart: the client's token file is a real Secret volume updated the
// way the kubelet does it, the real simulator accepts the tokens the test says, and the client
// reloads the file on the directory's notification, on its periodic stat and after a 401.
#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "backend/token_retry_transport.h"
#include "backend_fixture.h"
#include "support/secret_volume.h"
#include "util/log.h"

namespace backend_test {
namespace {

constexpr const char* kTokenA = "oxide-token-rotation-a-7c1e";
constexpr const char* kTokenB = "oxide-token-rotation-b-93fd";
constexpr const char* kTokenC = "oxide-token-rotation-c-51aa";
constexpr const char* kReloaded = "reloaded the Oxide API token from ";
constexpr const char* kBadFile = "the Oxide token file cannot be used";

class TokenRotationTest : public BackendTest, public TokenObserver {
 protected:
  void SetUp() override {
    log_path_ = ::testing::TempDir() + "/backend-token-log-" + std::to_string(::getpid());
    log_fd_ = ::open(log_path_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    oxide::log::Configure(oxide::log::Level::kDebug, oxide::log::Format::kText);
    oxide::log::SetOutputFd(log_fd_);
    oxide::log::RegisterSecret(oxide::log::SecretKind::kOxideToken,
                               kTokenA);  // as the plugin does with the token read at start
    BackendTest::SetUp();
    AcceptTokens({kTokenA});
    ClientConfig config = DefaultConfig();
    config.transport.token = kTokenA;
    config.token_file = volume_.token_path();
    Rebuild(config);
    client().token().set_observer(this);
    ASSERT_TRUE(RunUntilIdle());  // the watch's first look (it learns which file it read)
  }
  void TearDown() override {
    if (client_) client().token().set_observer(nullptr);
    BackendTest::TearDown();
    oxide::log::SetOutputFd(2);
    ::close(log_fd_);
    const std::string log = Log();
    for (const char* token : {kTokenA, kTokenB, kTokenC})
      EXPECT_EQ(log.find(token), std::string::npos) << "a token reached the log:\n" << log;
    ::unlink(log_path_.c_str());
  }

  void TokenReplaced() override { ++replaced_; }
  void TokenRejected() override { ++rejected_; }

  void AcceptTokens(const std::vector<std::string>& tokens) {
    sim_test::Reply reply = control().post("/__sim/auth/tokens", {{"tokens", tokens}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  int CountInLog(const std::string& text) const {
    const std::string log = Log();
    int count = 0;
    for (size_t at = log.find(text); at != std::string::npos; at = log.find(text, at + 1))
      ++count;
    return count;
  }
  // The statuses the simulator answered to `operation`, in order.
  std::vector<int> Statuses(const std::string& operation) {
    const nlohmann::json log = control().get("/__sim/requests").json();
    std::vector<int> statuses;
    for (const auto& entry : log["requests"])
      if (entry.value("operation", "") == operation) statuses.push_back(entry.value("status", 0));
    return statuses;
  }
  int CountStatus(int status) {
    const nlohmann::json log = control().get("/__sim/requests").json();
    int count = 0;
    for (const auto& entry : log["requests"])
      count += entry.value("status", 0) == status;
    return count;
  }
  uint64_t resent() { return dynamic_cast<TokenRetryTransport&>(client().transport()).resent(); }

  oxide::testing::SecretVolume volume_{kTokenA};
  std::string log_path_;
  int log_fd_ = -1;
  int replaced_ = 0;
  int rejected_ = 0;
};

// The rotation as it should go: Oxide accepts old and new, the kubelet swaps the file, the
// notification on the directory reloads it (the clock does not move, so the periodic stat
// cannot be what noticed), the old token is revoked, and no call fails.
TEST_F(TokenRotationTest, AKubeletSwapIsReloadedOnTheDirectoryEventAndNoCallFails) {
  AcceptTokens({kTokenA, kTokenB});
  ASSERT_TRUE(CreateBlankDisk("pv-before").ok());
  volume_.Swap(kTokenB);
  ASSERT_TRUE(RunWithoutTime([&] { return client().token().reloads() == 1; }));
  EXPECT_EQ(clock().elapsed().count(), 0);
  EXPECT_EQ(CountInLog(std::string(kReloaded) + volume_.token_path()), 1) << Log();
  EXPECT_EQ(replaced_, 1);
  AcceptTokens({kTokenB});
  ASSERT_TRUE(CreateBlankDisk("pv-after").ok());
  ASSERT_TRUE(GetDisk("pv-before").ok());
  EXPECT_TRUE(Await<Page<Disk>>([&](Done<Page<Disk>> d) { client().ListDisks({}, d); }).ok());
  EXPECT_EQ(CountStatus(401), 0);
  EXPECT_EQ(resent(), 0U);
  EXPECT_EQ(rejected_, 0);
}

// Oxide switches first: the call in flight gets 401, the client re-reads the file, finds the new
// token and sends the call again, a create included (a 401 means Oxide did nothing).
TEST_F(TokenRotationTest, A401AfterTheFileChangedResendsTheCallOnceWithTheNewToken) {
  AcceptTokens({kTokenB});
  volume_.Swap(kTokenB);
  StatusOr<Disk> created = CreateBlankDisk("pv-resent");  // sent with A before the loop runs
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(Statuses("disk_create"), (std::vector<int>{401, 201}));
  EXPECT_EQ(resent(), 1U);
  EXPECT_EQ(client().token().reloads(), 1U);
  EXPECT_EQ(rejected_, 0);
  EXPECT_EQ(CountInLog(kReloaded), 1) << Log();
}

// Oxide refuses the token and the file still holds it: the 401 is the answer, with the message
// of the error table, and the rejection is reported. When the file is fixed, the reload is
// reported and calls work again.
TEST_F(TokenRotationTest, A401WithTheTokenUnchangedFailsAndIsReportedUntilTheFileIsFixed) {
  AcceptTokens({kTokenC});
  ExpectError(GetDisk("pv-x").status(), StatusCode::kUnauthenticated,
              {"Oxide did not accept the API token"});
  EXPECT_EQ(Statuses("disk_view"), (std::vector<int>{401}));
  EXPECT_EQ(rejected_, 1);
  EXPECT_EQ(resent(), 0U);
  EXPECT_EQ(client().token().reloads(), 0U);
  volume_.Swap(kTokenC);
  ASSERT_TRUE(RunUntil([&] { return replaced_ == 1; }));
  ASSERT_TRUE(CreateBlankDisk("pv-fixed").ok());
  EXPECT_EQ(rejected_, 1);
}

// A file that becomes empty, then unreadable (the key gone from the Secret), keeps the last good
// token in use, with one warning per bad state however often it is looked at.
TEST_F(TokenRotationTest, AnEmptyOrMissingFileKeepsTheLastGoodTokenWithOneWarningEach) {
  volume_.Swap("");
  ASSERT_TRUE(RunUntil([&] { return CountInLog(kBadFile) == 1; })) << Log();
  EXPECT_NE(Log().find("is empty"), std::string::npos) << Log();
  const uint64_t looks = client().token_watch()->looks();
  Elapse(std::chrono::seconds(35));  // three periodic looks
  volume_.Swap("\n");                // an event, still empty
  Elapse(std::chrono::seconds(10));
  EXPECT_GE(client().token_watch()->looks(), looks + 4);
  EXPECT_EQ(CountInLog(kBadFile), 1) << Log();
  ASSERT_TRUE(CreateBlankDisk("pv-empty-file").ok());  // still token A

  volume_.RemoveToken();
  ASSERT_TRUE(RunUntil([&] { return CountInLog(kBadFile) == 2; })) << Log();
  EXPECT_NE(Log().find("cannot read the Oxide token file"), std::string::npos) << Log();
  Elapse(std::chrono::seconds(25));
  EXPECT_EQ(CountInLog(kBadFile), 2) << Log();
  ASSERT_TRUE(GetDisk("pv-empty-file").ok());

  volume_.Swap(kTokenA);  // the same token back: readable again, nothing reloaded
  ASSERT_TRUE(RunUntil([&] { return CountInLog("the Oxide token file is readable again") == 1; }));
  EXPECT_EQ(client().token().reloads(), 0U);
  EXPECT_EQ(replaced_, 0);
  EXPECT_EQ(CountStatus(401), 0);
}

// The periodic stat alone finds a change the notification would have missed (here: an
// in-place write to the file behind the symlinks, which the directory watch does not see).
TEST_F(TokenRotationTest, ThePeriodicStatFindsAChangeWithoutANotification) {
  AcceptTokens({kTokenA, kTokenB});
  const std::string target = volume_.directory() + "/..data/token";
  {
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out << kTokenB << "\n";
  }
  ASSERT_TRUE(RunUntil([&] { return client().token().reloads() == 1; }));
  EXPECT_GE(clock().elapsed(), TokenFileWatch::kStatPeriod);
  ASSERT_TRUE(CreateBlankDisk("pv-stat").ok());
}

}  // namespace
}  // namespace backend_test
