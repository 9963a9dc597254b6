#include "support/bench_flags.h"

#include <cstdio>
#include <cstdlib>

namespace oxide::testing {

void ParseIntFlags(int argc, char** argv, const std::map<std::string, int*>& known,
                   const char* usage) {
  for (int i = 1; i < argc; i += 2) {
    auto flag = known.find(argv[i]);
    if (flag == known.end() || i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s\n", usage);
      std::exit(2);
    }
    *flag->second = std::atoi(argv[i + 1]);
  }
}

}  // namespace oxide::testing
