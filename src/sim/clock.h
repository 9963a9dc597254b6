// Wall-clock timestamps in the Oxide wire format (RFC 3339 UTC with microseconds).
// Any thread may call these.
#pragma once

#include <string>

namespace oxide_sim {

// Now, e.g. "2026-08-20T17:02:11.482913Z": the wall clock plus the time advanced on the manual
// clock (--manual-clock), so that objects made after an advance look that much younger.
std::string now_rfc3339();
// The time the manual clock has advanced so far (set by the event loop's clock endpoint).
void set_wall_offset_ms(long long offset_ms);

// Milliseconds on a monotonic clock, for latency measurements.
long long monotonic_ms();

}  // namespace oxide_sim
