// The address the metrics endpoint listens on, as --metrics-address gives it. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace oxide::metrics {

struct ListenAddress {
  std::string host;   // an IPv4 or IPv6 literal (no brackets)
  uint16_t port = 0;  // 0: any free port (the plugin logs the one it got)
};

// "HOST:PORT"; IPv6 in brackets ("[::]:9810"); an empty host means all IPv4 addresses. Names are
// not resolved. INVALID_ARGUMENT naming the problem.
StatusOr<ListenAddress> ParseListenAddress(const std::string& text);

}  // namespace oxide::metrics
