#include "metrics/microhttpd_library.h"

#include <mutex>

#include "util/shared_library.h"

namespace oxide::metrics {
namespace {

MicrohttpdLibrary g_library{};
std::string g_error;  // empty once loaded

void LoadOnce() {
  void* handle = OpenSharedLibrary(kMicrohttpdLibraryFile, "libmicrohttpd12",
                                   "the metrics endpoint (--metrics-address)", &g_error);
  if (handle == nullptr) return;
  SymbolResolver resolver(handle);
  resolver.Find(&g_library.start_daemon, "MHD_start_daemon");
  resolver.Find(&g_library.stop_daemon, "MHD_stop_daemon");
  resolver.Find(&g_library.get_daemon_info, "MHD_get_daemon_info");
  resolver.Find(&g_library.create_response_from_buffer, "MHD_create_response_from_buffer");
  resolver.Find(&g_library.add_response_header, "MHD_add_response_header");
  resolver.Find(&g_library.queue_response, "MHD_queue_response");
  resolver.Find(&g_library.destroy_response, "MHD_destroy_response");
  if (!resolver.missing().empty()) {
    g_error = std::string(kMicrohttpdLibraryFile) + " has no " + resolver.missing() +
              ": too old a libmicrohttpd";
  }
  // The handle stays open for the life of the process.
}

}  // namespace

bool LoadMicrohttpd(std::string* error) {
  static std::once_flag once;
  std::call_once(once, LoadOnce);
  if (!g_error.empty() && error != nullptr) *error = g_error;
  return g_error.empty();
}

const MicrohttpdLibrary& Microhttpd() {
  return g_library;
}

}  // namespace oxide::metrics
