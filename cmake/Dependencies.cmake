# Every dependency comes from Debian packages (scripts/debian-packages.txt); nothing is downloaded.

find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(gRPC CONFIG REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(CURL REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)
pkg_check_modules(GNUTLS REQUIRED IMPORTED_TARGET gnutls)
if(OXIDE_CSI_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(OXIDE_CSI_BUILD_BENCH)
  find_package(benchmark QUIET)
endif()

find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)

# oxide_grpc: gRPC C++ and protobuf for every target. By default gRPC without TLS (the CSI socket
# is a local unix socket) and protobuf are linked statically from Debian's .a files: the plugin
# then touches ~7 MiB less memory at rest than with the shared libraries (see README,
# Performance). Every target of the project must use this one target, never a mix, or protobuf's
# registries would exist twice in one process.
option(OXIDE_CSI_STATIC_GRPC "Link gRPC (without TLS) and protobuf statically" ON)
add_library(oxide_grpc INTERFACE)
if(OXIDE_CSI_STATIC_GRPC)
  execute_process(
    COMMAND ${PKG_CONFIG_EXECUTABLE} --static --libs-only-l grpc++_unsecure protobuf
    OUTPUT_VARIABLE grpc_static_flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  separate_arguments(grpc_static_flags UNIX_COMMAND "${grpc_static_flags}")
  # System libraries stay shared; only gRPC, protobuf and their own dependencies are static.
  list(REMOVE_ITEM grpc_static_flags -lrt -lm -ldl -lpthread -latomic)
  list(REMOVE_DUPLICATES grpc_static_flags)
  target_link_libraries(oxide_grpc INTERFACE
    -Wl,-Bstatic -Wl,--start-group ${grpc_static_flags} -lcares -lre2 -lupb -laddress_sorting
    -Wl,--end-group -Wl,-Bdynamic
    Threads::Threads ${CMAKE_DL_LIBS} rt m atomic)
  target_compile_definitions(oxide_grpc INTERFACE NOMINMAX)
else()
  target_link_libraries(oxide_grpc INTERFACE gRPC::grpc++ protobuf::libprotobuf)
endif()
