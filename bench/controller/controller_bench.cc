// Controller benchmark (docs/performance.md "Controller"): by default one cell (N volumes at
// concurrency C against oxide-sim with latency L, then M CreateVolume calls at once); --matrix,
// --restart-test and --peer add the C × L matrix, the restart figure and the peer comparison.
#include <cstdio>
#include <string>
#include <vector>

#include "bench_options.h"
#include "bench_session.h"
#include "in_flight.h"
#include "machine_speed.h"
#include "matrix.h"
#include "peer_pairs.h"
#include "restart_figure.h"
#include "volume_cell.h"

int main(int argc, char** argv) {
  using namespace oxide::bench;
  const Options options = ParseOptions(argc, argv);
  // The single cell starts the sim with its latency; the other parts set it through the control
  // API. 1 PiB of storage quota: the restart figure leaves N/2 disks of 1 GiB behind.
  std::vector<std::string> sim_args = {"--storage-quota", "1125899906842624"};
  if (options.single_cell()) {
    sim_args = {"--fault", "*:latency_ms=" + std::to_string(options.latency_ms)};
  }
  BenchSession session(sim_args);
  if (!session.ok()) return 1;
  std::printf(
      "machine speed reference: sorting 1 Mi 32-bit values took %.1f ms of CPU (median of "
      "5; lower is faster)\n",
      ReferenceWorkMs());
  std::fflush(stdout);
  if (options.single_cell()) {
    if (options.volumes > 0) {
      PrintCellReport(RunVolumeCell(session, {.volumes = options.volumes,
                                              .concurrency = options.concurrency,
                                              .latency_ms = options.latency_ms,
                                              .name_prefix = "bench-vol-"}));
    }
    if (options.in_flight > 0) RunInFlight(session, options.in_flight, options.latency_ms);
    return 0;
  }
  if (options.matrix) PrintMatrixTable(RunMatrix(session, options));
  std::fflush(stdout);
  if (options.peer) RunPeerComparison(session, options.peer_pairs, options.peer_concurrency);
  std::fflush(stdout);
  if (options.restart_entries > 0) RunRestartFigure(session, options.restart_entries);
  return 0;
}
