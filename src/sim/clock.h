// Wall-clock timestamps in the Oxide wire format (RFC 3339 UTC with microseconds).
// Any thread may call these.
#pragma once

#include <string>

namespace oxide_sim {

// Now, e.g. "2026-08-20T17:02:11.482913Z".
std::string now_rfc3339();

// Milliseconds on a monotonic clock, for latency measurements.
long long monotonic_ms();

}  // namespace oxide_sim
