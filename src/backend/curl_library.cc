#include "backend/curl_library.h"

#include <dlfcn.h>

#include <mutex>
#include <type_traits>

namespace oxide::backend {
namespace {

CurlLibrary g_library{};
std::string g_error;  // empty once loaded

// Fills every function of `library` from `handle`; the name of the first one missing, or "".
std::string Resolve(void* handle, CurlLibrary* library) {
  std::string missing;
  auto find = [&](auto* slot, const char* name) {
    void* symbol = dlsym(handle, name);
    if (symbol == nullptr && missing.empty()) missing = name;
    *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(symbol);
  };
  find(&library->global_init, "curl_global_init");
  find(&library->easy_init, "curl_easy_init");
  find(&library->easy_setopt, "curl_easy_setopt");
  find(&library->easy_getinfo, "curl_easy_getinfo");
  find(&library->easy_perform, "curl_easy_perform");
  find(&library->easy_cleanup, "curl_easy_cleanup");
  find(&library->easy_strerror, "curl_easy_strerror");
  find(&library->multi_init, "curl_multi_init");
  find(&library->multi_setopt, "curl_multi_setopt");
  find(&library->multi_add_handle, "curl_multi_add_handle");
  find(&library->multi_remove_handle, "curl_multi_remove_handle");
  find(&library->multi_socket_action, "curl_multi_socket_action");
  find(&library->multi_info_read, "curl_multi_info_read");
  find(&library->multi_cleanup, "curl_multi_cleanup");
  find(&library->slist_append, "curl_slist_append");
  find(&library->slist_free_all, "curl_slist_free_all");
  return missing;
}

void LoadOnce() {
  void* handle = dlopen(kCurlLibraryFile, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    g_error = std::string("cannot load ") + kCurlLibraryFile +
              " (Debian package libcurl4), which " +
              "the Oxide client needs: " + (why != nullptr ? why : "unknown error");
    return;
  }
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
