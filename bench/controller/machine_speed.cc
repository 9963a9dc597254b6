// The machine speed reference: sorting 1 Mi pseudo-random 32-bit values (4 MiB: compute, caches
// and branches), timed on the thread's CPU clock.
#include "machine_speed.h"

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace oxide::bench {

// Median of 5: the same binary's figures on this shared VM vary by up to 1.5x from day to day,
// and this says how fast the machine was during the run.
double ReferenceWorkMs() {
  std::vector<double> runs;
  for (int run = 0; run < 5; ++run) {
    std::vector<uint32_t> values(1 << 20);
    uint32_t x = 2463534242u;
    for (uint32_t& v : values) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      v = x;
    }
    timespec start{}, end{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    std::sort(values.begin(), values.end());
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &end);
    if (values.front() > values.back()) std::abort();  // keeps the sort
    runs.push_back(static_cast<double>(end.tv_sec - start.tv_sec) * 1e3 +
                   static_cast<double>(end.tv_nsec - start.tv_nsec) / 1e6);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

}  // namespace oxide::bench
