// controller_bench's command line: which parts of the benchmark run and how big they are.
// Main thread only.
#pragma once

namespace oxide::bench {

struct Options {
  // The single cell (docs/performance.md "Controller"): runs when none of the parts below is
  // chosen.
  int volumes = 2000;
  int concurrency = 100;
  int latency_ms = 50;
  int in_flight = 10000;
  // --matrix: every cell of C x L, then (unless set to 0) the restart figure and the peer pairs.
  bool matrix = false;
  int matrix_volumes = 0;     // N of every cell; 0: chosen per cell to take matrix_seconds
  int matrix_seconds = 10;    // roughly how long a cell's measured run takes (see matrix.cc)
  int restart_entries = 0;    // --restart-test N; 10000 with --matrix unless given
  bool peer = false;          // --peer (also part of --matrix)
  int peer_pairs = 10000;     // CreateVolume + DeleteVolume pairs per server
  int peer_concurrency = 16;  // pairs in flight at once

  bool single_cell() const { return !matrix && !peer && restart_entries == 0; }
};

// Parses argv; bad or unknown flags print the usage and exit with code 2.
Options ParseOptions(int argc, char** argv);

}  // namespace oxide::bench
