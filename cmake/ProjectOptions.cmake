# Compiler settings: the project's warnings (target oxide_warnings; errors with
# -DOXIDE_CSI_WERROR=ON, as the test command builds), and the sanitizer switches, which apply to
# every target so that the tests run fully instrumented.

add_library(oxide_warnings INTERFACE)
if(OXIDE_CSI_WERROR)
  target_compile_options(oxide_warnings INTERFACE -Werror)
endif()
target_compile_options(oxide_warnings INTERFACE
  -Wall -Wextra -Wpedantic
  -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused
  -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)
# GCC 12 at -O3 (Release) inlines deep enough into libstdc++'s std::string and nlohmann_json for
# its late flow warnings to report overlapping, oversized or out-of-bounds copies and null
# dereferences that no execution reaches (e.g. in `"literal" + std::to_string(n)`; GCC bugs
# 105329, 105651; which of them fires depends on inlining decisions). The sanitizer builds (-O2,
# RelWithDebInfo) keep all of them on.
set(gcc_o3_false_positives -Wno-restrict -Wno-array-bounds -Wno-stringop-overflow
    -Wno-stringop-overread -Wno-null-dereference)
target_compile_options(oxide_warnings INTERFACE
  "$<$<AND:$<CXX_COMPILER_ID:GNU>,$<CONFIG:Release>>:${gcc_o3_false_positives}>")

if((OXIDE_CSI_SANITIZE OR OXIDE_CSI_FUZZ) AND OXIDE_CSI_TSAN)
  message(FATAL_ERROR "OXIDE_CSI_TSAN cannot be combined with OXIDE_CSI_SANITIZE or OXIDE_CSI_FUZZ")
endif()
if(OXIDE_CSI_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(OXIDE_CSI_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "OXIDE_CSI_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  # Every library is instrumented for coverage; only the fuzz_* executables link libFuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
if(OXIDE_CSI_TSAN)
  # Debian's protobuf, gRPC and Abseil are not TSan-built, and their headers change class layouts
  # when __SANITIZE_THREAD__ is defined (protobuf's MapFieldBase gains two counters): code
  # compiled against them must see the layout the libraries were built with, or map reflection
  # reads the wrong member and crashes. TSan's instrumentation does not need the macro.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -U__SANITIZE_THREAD__)
  add_link_options(-fsanitize=thread)
endif()

# The project version, baked into the binaries (GetPluginInfo.vendor_version, --version, User-Agent).
set(OXIDE_CSI_VERSION "${PROJECT_VERSION}")

# Loop-thread checks (src/loop/loop_affinity.h) in the builds the tests run checked.
if(CMAKE_BUILD_TYPE STREQUAL "Debug" OR OXIDE_CSI_SANITIZE OR OXIDE_CSI_TSAN)
  add_compile_definitions(OXIDE_CSI_LOOP_CHECKS)
endif()
