#include "backend/client_config.h"

#include <unistd.h>

#include "backend/token_file.h"
#include "config/settings.h"
#include "util/log.h"

namespace oxide::backend {
namespace {

// The token at start: OXIDE_TOKEN as parsed, or the token file's (ParseCommandLine has checked
// that exactly one of them is set).
StatusOr<std::string> StartupToken(const Settings& settings) {
  if (settings.oxide_token_file.empty()) return settings.oxide_token;
  StatusOr<std::string> token = ReadTokenFile(settings.oxide_token_file);
  if (token.ok()) return token;
  Status invalid = InvalidSetting("oxide-token-file", token.status().message());
  if (!settings.oxide_token_file_from_env) return invalid;
  return Status(invalid.code(), invalid.message() + " (from OXIDE_TOKEN_FILE)");
}

}  // namespace

StatusOr<ClientConfig> ReadClientConfig(const Settings& settings) {
  StatusOr<std::string> token = StartupToken(settings);
  if (!token.ok()) return token.status();
  // Before anything could log it (the token file watch re-registers every token it reloads:
  // ApiToken::Replace).
  log::RegisterSecret(log::SecretKind::kOxideToken, *token);
  if (!settings.oxide_ca_file.empty() && access(settings.oxide_ca_file.c_str(), R_OK) != 0) {
    return InvalidSetting("oxide-ca-file", "cannot read " + settings.oxide_ca_file);
  }
  ClientConfig config;
  config.project = settings.oxide_project;
  config.transport.base_url = settings.oxide_host;
  config.transport.token = std::move(*token);
  config.token_file = settings.oxide_token_file;
  config.transport.ca_file = settings.oxide_ca_file;
  config.transport.insecure = settings.oxide_insecure;
  return config;
}

}  // namespace oxide::backend
