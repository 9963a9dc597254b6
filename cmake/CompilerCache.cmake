# Compiles through ccache (Debian: ccache) when it is installed and OXIDE_CSI_CCACHE is ON.
# Set up so that a fresh clone in another folder on the same machine hits the objects an earlier
# clone left: paths under the source tree are hashed relative to it (base_dir), the working
# directory is not hashed (hash_dir off; it only names the folder in debug information, which
# therefore names the clone that compiled an object first). A launcher someone sets themselves
# (-DCMAKE_CXX_COMPILER_LAUNCHER=...) wins.
if(NOT OXIDE_CSI_CCACHE OR CMAKE_CXX_COMPILER_LAUNCHER)
  return()
endif()
find_program(OXIDE_CCACHE_PROGRAM ccache)
if(NOT OXIDE_CCACHE_PROGRAM)
  message(STATUS "ccache not found: compiling without a compiler cache")
  return()
endif()
set(oxide_ccache_launcher
  ${CMAKE_COMMAND} -E env
  CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
  CCACHE_NOHASHDIR=1
  ${OXIDE_CCACHE_PROGRAM})
set(CMAKE_C_COMPILER_LAUNCHER ${oxide_ccache_launcher})
set(CMAKE_CXX_COMPILER_LAUNCHER ${oxide_ccache_launcher})
message(STATUS "Compiling through ${OXIDE_CCACHE_PROGRAM} (base_dir ${PROJECT_SOURCE_DIR})")
