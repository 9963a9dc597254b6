// --matrix: every cell of C ∈ {1, 16, 100} callers × L ∈ {0, 5, 50} ms of Oxide latency, each with
// a fresh plugin process and state database and an N sized to take about --matrix-seconds, then
// one table of all cells. Main thread only.
#pragma once

#include <vector>

#include "bench_options.h"
#include "bench_session.h"
#include "volume_cell.h"

namespace oxide::bench {

// Runs the cells (progress lines as they go) and returns their results in order.
std::vector<CellResult> RunMatrix(BenchSession& session, const Options& options);
void PrintMatrixTable(const std::vector<CellResult>& cells);

}  // namespace oxide::bench
