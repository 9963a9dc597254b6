// The Oxide client's configuration read at start (backend/client_config.h): the token file's
// first read (trimmed; the errors that stop the start, naming the setting and never the token),
// the token from OXIDE_TOKEN without any file, the CA file check, and the token's registration
// with the log's redaction. Real files in a temporary directory.
#include "backend/client_config.h"

#include <gtest/gtest.h>

#include "config/settings.h"
#include "support/temp_dir.h"
#include "util/log.h"

namespace oxide::backend {
namespace {

using testing::TempDir;
using testing::WriteFile;

Settings ControllerSettings() {
  Settings s;
  s.mode = Mode::kController;
  s.oxide_host = "https://oxide.example.com";
  s.oxide_project = "k8s";
  return s;
}

// Each test its own token: the log's redaction set is process-wide.
std::string Token(const std::string& test) {
  return "oxide-token-client-config-" + test + "-0123456789";
}

TEST(ReadClientConfig, TakesTheTokenFromTheFileTrimmedAndKeepsTheFileToWatch) {
  TempDir dir;
  WriteFile(dir.File("token"), Token("file") + "\n");
  Settings s = ControllerSettings();
  s.oxide_token_file = dir.File("token");
  s.oxide_ca_file = dir.File("token");  // any readable file
  s.oxide_insecure = true;
  auto config = ReadClientConfig(s);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->transport.token, Token("file"));
  EXPECT_EQ(config->token_file, dir.File("token"));
  EXPECT_EQ(config->transport.base_url, "https://oxide.example.com");
  EXPECT_EQ(config->project, "k8s");
  EXPECT_EQ(config->transport.ca_file, dir.File("token"));
  EXPECT_TRUE(config->transport.insecure);
}

TEST(ReadClientConfig, TakesTheTokenFromTheVariableWithoutAFile) {
  Settings s = ControllerSettings();
  s.oxide_token = Token("env");
  auto config = ReadClientConfig(s);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->transport.token, Token("env"));
  EXPECT_EQ(config->token_file, "");  // nothing to watch
}

// Before any record could carry it: the token read from the file, and the one from OXIDE_TOKEN.
TEST(ReadClientConfig, RegistersTheTokenWithTheLogsRedaction) {
  TempDir dir;
  WriteFile(dir.File("token"), Token("redacted-file"));
  Settings s = ControllerSettings();
  s.oxide_token_file = dir.File("token");
  ASSERT_TRUE(ReadClientConfig(s).ok());
  EXPECT_EQ(log::Redact("sent " + Token("redacted-file")), "sent [REDACTED]");

  Settings env = ControllerSettings();
  env.oxide_token = Token("redacted-env");
  ASSERT_TRUE(ReadClientConfig(env).ok());
  EXPECT_EQ(log::Redact("sent " + Token("redacted-env")), "sent [REDACTED]");
}

TEST(ReadClientConfig, AnUnusableTokenFileIsAnErrorNamingTheSetting) {
  TempDir dir;
  Settings s = ControllerSettings();
  s.oxide_token_file = "/nonexistent/token";
  auto missing = ReadClientConfig(s);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.status().message(),
            "invalid setting --oxide-token-file: cannot read the Oxide token file "
            "/nonexistent/token");

  s.oxide_token_file_from_env = true;  // the variable named it: the message says so
  auto from_env = ReadClientConfig(s);
  ASSERT_FALSE(from_env.ok());
  EXPECT_EQ(from_env.status().message(),
            "invalid setting --oxide-token-file: cannot read the Oxide token file "
            "/nonexistent/token (from OXIDE_TOKEN_FILE)");

  WriteFile(dir.File("empty"), "\n");
  s.oxide_token_file = dir.File("empty");
  auto empty = ReadClientConfig(s);
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("is empty"), std::string::npos)
      << empty.status().message();

  // Not a token file (an endless /dev/zero): refused after 64 KiB, never read whole.
  s.oxide_token_file = "/dev/zero";
  auto endless = ReadClientConfig(s);
  ASSERT_FALSE(endless.ok());
  EXPECT_NE(endless.status().message().find("larger than 64 KiB"), std::string::npos)
      << endless.status().message();
}

TEST(ReadClientConfig, AnUnreadableCaFileIsAnErrorNamingTheSetting) {
  Settings s = ControllerSettings();
  s.oxide_token = Token("ca");
  s.oxide_ca_file = "/nonexistent/ca.pem";
  auto config = ReadClientConfig(s);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(config.status().message(),
            "invalid setting --oxide-ca-file: cannot read /nonexistent/ca.pem");
  EXPECT_EQ(config.status().message().find(Token("ca")), std::string::npos);
}

}  // namespace
}  // namespace oxide::backend
