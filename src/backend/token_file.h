// Reading the Oxide API token from its file (OXIDE_TOKEN_FILE): the first read at start
// (client_config.h) and every re-read of the watch (token_file_watch.h). Blocking file I/O: call
// on the main thread before the loop runs, or on a worker thread; never on the loop thread.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::backend {

// The token in the file at `path` (trailing white space dropped): INVALID_ARGUMENT naming the
// file when it cannot be read, is empty or is larger than 64 KiB. The token is never in a message.
StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace oxide::backend
