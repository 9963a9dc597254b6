// TLS against oxide-sim with a certificate made by the openssl CLI: verified with ca_file,
// refused with the system CAs only (and not retried), accepted with insecure.
#include <unistd.h>

#include <cstdlib>

#include "backend_fixture.h"

namespace backend_test {
namespace {

std::string CertDir() {
  return testing::TempDir() + "/backend-tls-" + std::to_string(::getpid());
}

class TlsTest : public BackendTest {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = CertDir();
    const std::string command =
        "mkdir -p " + dir +
        " && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
        "-addext subjectAltName=IP:127.0.0.1 -keyout " +
        dir + "/key.pem -out " + dir + "/cert.pem >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  void SetUp() override {
    BackendTest::SetUp();
    if (control_) control().set_ca_file(CertDir() + "/cert.pem");
  }
  static void TearDownTestSuite() { std::system(("rm -rf " + CertDir()).c_str()); }
  std::vector<std::string> sim_args() const override {
    return {"--tls-cert", CertDir() + "/cert.pem", "--tls-key", CertDir() + "/key.pem"};
  }
  Status Me() {
    return Await<CurrentUser>(
               [&](Done<CurrentUser> done) { client().GetCurrentUser(std::move(done)); })
        .status();
  }
};

TEST_F(TlsTest, VerifiedWithTheCaFile) {
  ASSERT_EQ(sim().base_url().rfind("https://", 0), 0U);
  ClientConfig config = DefaultConfig();
  config.transport.ca_file = CertDir() + "/cert.pem";
  Rebuild(config);
  EXPECT_TRUE(Me().ok()) << Me().ToString();
  EXPECT_TRUE(CreateBlankDisk("pv-tls").ok());
}

TEST_F(TlsTest, RefusedWithTheSystemCasAndNotRetried) {
  ClearRequestLog();
  const Status status = Me();
  ExpectError(status, StatusCode::kUnavailable, {"TLS with the Oxide API failed"});
  EXPECT_EQ(status.message().find("attempts"), std::string::npos) << status.ToString();
  EXPECT_EQ(CountRequests("GET", "current_user_view"), 0);
}

TEST_F(TlsTest, AcceptedWhenInsecure) {
  ClientConfig config = DefaultConfig();
  config.transport.insecure = true;
  Rebuild(config);
  EXPECT_TRUE(Me().ok()) << Me().ToString();
}

}  // namespace
}  // namespace backend_test
