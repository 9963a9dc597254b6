// Runs the plugin with validated settings: state database, event loop, CSI server, signals.
// Call from the main thread, which becomes the loop thread. Returns the process exit code:
// 0 after a graceful shutdown, 2 when the plugin cannot start.
#pragma once

#include "backend/client_config.h"
#include "config/settings.h"

namespace oxide {

// `oxide_config`: the Oxide client's, from backend::ReadClientConfig (which also registers the
// token with the log's redaction; a controller's, unused by a node).
int RunPlugin(const Settings& settings, const backend::ClientConfig& oxide_config);

}  // namespace oxide
