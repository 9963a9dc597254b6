#include "loop/loop_affinity.h"

#include <cstdlib>
#include <string>

#include "util/log.h"

namespace oxide {

void LoopAffinity::Violated(const char* what) {
  log::Error(std::string(what) + " called off its loop thread (a bug); aborting");
  std::abort();
}

}  // namespace oxide
