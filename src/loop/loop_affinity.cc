#include "loop/loop_affinity.h"

#include <cstdio>
#include <cstdlib>

namespace oxide {

void LoopAffinity::Violated(const char* what) {
  std::fprintf(stderr, "%s called off its loop thread\n", what);
  std::abort();
}

}  // namespace oxide
