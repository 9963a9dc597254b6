// The libFuzzer entry point every target in this folder defines. Built two ways: with clang and
// -fsanitize=fuzzer for scripts/fuzz.sh (-DOXIDE_CSI_FUZZ=ON), and with the project's compiler
// and replay_main.cc as a ctest that runs the target over its seed corpus. Single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

// An invariant of a target: when it does not hold, the input is a crash libFuzzer keeps.
inline void Expect(bool holds) {
  if (!holds) std::abort();
}
