// The machine speed reference every controller_bench run prints first: how fast this (shared,
// virtual) machine was during the run. Any thread.
#pragma once

namespace oxide::bench {

// CPU milliseconds of a fixed piece of work (sorting 1 Mi pseudo-random 32-bit values), median
// of 5; lower is faster.
double ReferenceWorkMs();

}  // namespace oxide::bench
