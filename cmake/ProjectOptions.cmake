# Compiler settings: warnings are errors in project code (target oxide_warnings), and the
# sanitizer switches apply to every target so that the tests run fully instrumented.

add_library(oxide_warnings INTERFACE)
target_compile_options(oxide_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Werror
  -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused
  -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2
  -Wimplicit-fallthrough)

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
