// Runs the plugin with validated settings: state database, event loop, CSI server, signals.
// Call from the main thread, which becomes the loop thread. Returns the process exit code:
// 0 after a graceful shutdown, 2 when the plugin cannot start.
#pragma once

#include "config/settings.h"

namespace oxide {

int RunPlugin(const Settings& settings);

}  // namespace oxide
