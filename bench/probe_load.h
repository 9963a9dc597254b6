// A closed-loop load generator for CSI Probe: `concurrency` calls always outstanding on one
// channel, driven by an async completion queue on `threads` client threads. Used by the
// benchmarks only.
#pragma once

#include <grpcpp/channel.h>

#include <chrono>
#include <memory>
#include <vector>

namespace oxide::bench {

struct LoadResult {
  double calls_per_second = 0;
  double p50_us = 0;
  double p99_us = 0;
  double p999_us = 0;
  uint64_t calls = 0;
  uint64_t errors = 0;
};

LoadResult RunProbeLoad(std::shared_ptr<grpc::Channel> channel, int concurrency, int threads,
                        std::chrono::milliseconds warmup, std::chrono::milliseconds duration);

}  // namespace oxide::bench
