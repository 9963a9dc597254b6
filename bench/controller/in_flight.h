// The in-flight test of the single cell: M CreateVolume calls at once against a fresh plugin
// process, sampling its RSS while they wait for Oxide. Main thread only.
#pragma once

#include "bench_session.h"

namespace oxide::bench {

// `latency_ms` is what the sim is set to (printed only).
void RunInFlight(BenchSession& session, int calls, int latency_ms);

}  // namespace oxide::bench
