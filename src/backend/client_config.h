// What the Oxide client is built from (ClientConfig), and its reading at start from the settings:
// where the token file (OXIDE_TOKEN_FILE) is first read and the CA file checked, and where the
// token, from the file or from OXIDE_TOKEN, is registered with the log's redaction before any
// record could carry it. Blocking file I/O: call on the main thread at start, before the loop
// runs and before anything else that could log the token.
#pragma once

#include <string>

#include "backend/curl_transfer.h"
#include "backend/retry_policy.h"
#include "util/status.h"

namespace oxide {
struct Settings;
}

namespace oxide::backend {

struct ClientConfig {
  std::string project;  // names are looked up in it; lists and creates go to it
  TransportOptions transport;
  RetryOptions retry;
  // Watched and re-read while running (transport.token holds what it said at start); empty: the
  // token never changes.
  std::string token_file;
};

// oxide_host, oxide_token(_file), oxide_ca_file, oxide_insecure and oxide_project of the
// settings, with the token read from oxide_token_file when one is named. A token file that
// cannot be used or a CA file that cannot be read is INVALID_ARGUMENT naming the setting ("invalid
// setting --oxide-token-file: ...", "(from OXIDE_TOKEN_FILE)" when the variable named it), never
// the token.
StatusOr<ClientConfig> ReadClientConfig(const Settings& settings);

}  // namespace oxide::backend
