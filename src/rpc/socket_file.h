// Prepares and removes the CSI socket file. A stale socket left by a dead plugin is replaced; a
// socket a live process still serves is refused; any other kind of file is never touched.
// Main thread, at start and at exit.
#pragma once

#include <string>

#include "util/status.h"

namespace oxide::rpc {

// OK when `path` is free to bind (nothing there, or a stale socket now removed).
Status PrepareSocketPath(const std::string& path);

// Removes `path` if it is a socket. Never fails loudly: the process is exiting.
void RemoveSocketFile(const std::string& path);

}  // namespace oxide::rpc
