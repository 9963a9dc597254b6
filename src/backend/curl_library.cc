#include "backend/curl_library.h"

#include <mutex>

#include "util/shared_library.h"

namespace oxide::backend {
namespace {

CurlLibrary g_library{};
std::string g_error;  // empty once loaded

// Fills every function of `library` from `handle`; the name of the first one missing, or "".
std::string Resolve(void* handle, CurlLibrary* library) {
  SymbolResolver resolver(handle);
  resolver.Find(&library->global_init, "curl_global_init");
  resolver.Find(&library->easy_init, "curl_easy_init");
  resolver.Find(&library->easy_setopt, "curl_easy_setopt");
  resolver.Find(&library->easy_getinfo, "curl_easy_getinfo");
  resolver.Find(&library->easy_perform, "curl_easy_perform");
  resolver.Find(&library->easy_cleanup, "curl_easy_cleanup");
  resolver.Find(&library->easy_strerror, "curl_easy_strerror");
  resolver.Find(&library->multi_init, "curl_multi_init");
  resolver.Find(&library->multi_setopt, "curl_multi_setopt");
  resolver.Find(&library->multi_add_handle, "curl_multi_add_handle");
  resolver.Find(&library->multi_remove_handle, "curl_multi_remove_handle");
  resolver.Find(&library->multi_socket_action, "curl_multi_socket_action");
  resolver.Find(&library->multi_info_read, "curl_multi_info_read");
  resolver.Find(&library->multi_cleanup, "curl_multi_cleanup");
  resolver.Find(&library->slist_append, "curl_slist_append");
  resolver.Find(&library->slist_free_all, "curl_slist_free_all");
  return resolver.missing();
}

void LoadOnce() {
  void* handle = OpenSharedLibrary(kCurlLibraryFile, "libcurl4", "the Oxide client", &g_error);
  if (handle == nullptr) return;
  std::string missing = Resolve(handle, &g_library);
  if (!missing.empty()) {
    g_error = std::string(kCurlLibraryFile) + " has no " + missing + ": too old a libcurl";
    return;
  }
  CURLcode init = g_library.global_init(CURL_GLOBAL_DEFAULT);
  if (init != CURLE_OK) {
    g_error = std::string("curl_global_init failed: ") + g_library.easy_strerror(init);
  }
  // The handle stays open for the life of the process.
}

}  // namespace

bool LoadCurl(std::string* error) {
  static std::once_flag once;
  std::call_once(once, LoadOnce);
  if (!g_error.empty() && error != nullptr) *error = g_error;
  return g_error.empty();
}

const CurlLibrary& Curl() {
  return g_library;
}

}  // namespace oxide::backend
