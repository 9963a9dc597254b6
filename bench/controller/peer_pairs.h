// --peer: CreateVolume + DeleteVolume pairs at C callers through the same async client against
// oxide-csi-plugin (controller mode, sim latency 0) and the reference Go driver (hostpathplugin),
// side by side: pairs/s, latency per pair, each server's CPU per pair. Main thread only.
#pragma once

#include "bench_session.h"

namespace oxide::bench {

void RunPeerComparison(BenchSession& session, int pairs, int concurrency);

}  // namespace oxide::bench
