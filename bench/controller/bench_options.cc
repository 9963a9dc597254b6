// controller_bench's flags: --matrix and --peer stand alone, every other flag takes an integer.
#include "bench_options.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/bench_flags.h"

namespace oxide::bench {
namespace {

constexpr const char* kUsage =
    "controller_bench [--volumes N] [--concurrency C] [--latency-ms L] [--in-flight-test M]\n"
    "                 [--matrix] [--matrix-volumes N] [--matrix-seconds S]\n"
    "                 [--restart-test N] [--peer] [--peer-pairs N] [--peer-concurrency C]\n"
    "Without --matrix, --peer or --restart-test: the single cell (N volumes at C, L) and the\n"
    "in-flight test. --matrix: C in {1,16,100} x L in {0,5,50} ms, each cell's N chosen from a\n"
    "short pilot run so that the cell takes about S seconds (default 10) unless --matrix-volumes\n"
    "fixes it; then --peer and --restart-test 10000 (--restart-test 0 skips it).";

constexpr int kMatrixRestartEntries = 10000;

}  // namespace

Options ParseOptions(int argc, char** argv) {
  Options options;
  int restart = -1;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--matrix") {
      options.matrix = true;
    } else if (flag == "--peer") {
      options.peer = true;
    } else if (flag == "--help" || flag == "-h") {
      std::printf("usage: %s\n", kUsage);
      std::exit(0);
    } else {
      rest.push_back(argv[i]);
    }
  }
  testing::ParseIntFlags(static_cast<int>(rest.size()), rest.data(),
                         {{"--volumes", &options.volumes},
                          {"--concurrency", &options.concurrency},
                          {"--latency-ms", &options.latency_ms},
                          {"--in-flight-test", &options.in_flight},
                          {"--matrix-volumes", &options.matrix_volumes},
                          {"--matrix-seconds", &options.matrix_seconds},
                          {"--restart-test", &restart},
                          {"--peer-pairs", &options.peer_pairs},
                          {"--peer-concurrency", &options.peer_concurrency}},
                         kUsage);
  if (restart >= 0) {
    options.restart_entries = restart;
  } else if (options.matrix) {
    options.restart_entries = kMatrixRestartEntries;
  }
  if (options.matrix) options.peer = true;
  if (options.concurrency < 1 || options.peer_concurrency < 1 || options.latency_ms < 0 ||
      options.volumes < 0 || options.in_flight < 0 || options.matrix_volumes < 0 ||
      options.matrix_seconds < 1 || options.restart_entries < 0 || options.peer_pairs < 1) {
    std::fprintf(stderr,
                 "--concurrency, --peer-concurrency, --peer-pairs and --matrix-seconds must be at "
                 "least 1; the others may not be negative\n");
    std::exit(2);
  }
  return options;
}

}  // namespace oxide::bench
