// Command-line handling shared by the benchmark programs: "--name value" pairs of integer flags,
// and KiB → MiB for the figures they print. Main thread of a benchmark only.
#pragma once

#include <map>
#include <string>

namespace oxide::testing {

// Sets the int of every "--name value" pair in `known`; an unknown flag or a missing value
// prints `usage` to stderr and exits with code 2.
void ParseIntFlags(int argc, char** argv, const std::map<std::string, int*>& known,
                   const char* usage);

inline double MiB(long kib) {
  return static_cast<double>(kib) / 1024.0;
}

}  // namespace oxide::testing
