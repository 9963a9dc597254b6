// --restart-test N: how fast a plugin comes back with N unfinished journal entries (half of them
// creates whose disk Oxide made, half creates it never made) at 5 ms of Oxide latency: time to the
// first Probe answered OK, time until every entry is reconciled, peak RSS. Main thread only.
#pragma once

#include "bench_session.h"

namespace oxide::bench {

void RunRestartFigure(BenchSession& session, int entries);

}  // namespace oxide::bench
