// libmicrohttpd, opened with dlopen() when the metrics endpoint starts, so that a plugin run
// without --metrics-address does not map it and the GnuTLS chain it links (~3 MiB of a node's
// idle RSS). Holds the functions the endpoint calls. LoadMicrohttpd(): any thread (once);
// Microhttpd(): after it returned true.
#pragma once

#include <microhttpd.h>

#include <string>

namespace oxide::metrics {

struct MicrohttpdLibrary {
  decltype(&::MHD_start_daemon) start_daemon;
  decltype(&::MHD_stop_daemon) stop_daemon;
  decltype(&::MHD_get_daemon_info) get_daemon_info;
  decltype(&::MHD_create_response_from_buffer) create_response_from_buffer;
  decltype(&::MHD_add_response_header) add_response_header;
  decltype(&::MHD_queue_response) queue_response;
  decltype(&::MHD_destroy_response) destroy_response;
};

// The library's file name: Debian's libmicrohttpd12 package.
inline constexpr const char* kMicrohttpdLibraryFile = "libmicrohttpd.so.12";

// Opens libmicrohttpd once; on later calls returns the first outcome. False with `error` naming
// what is missing.
bool LoadMicrohttpd(std::string* error);
const MicrohttpdLibrary& Microhttpd();

}  // namespace oxide::metrics
