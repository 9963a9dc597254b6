// libcurl, opened with dlopen() when the first Oxide transport is made, so that a plugin that
// never talks to Oxide (--mode=node, the DaemonSet on every node) does not map libcurl and its
// chain of libraries (OpenSSL, GnuTLS, Kerberos, LDAP, ...: ~5 MiB of its idle RSS). Holds the
// libcurl functions the transport calls. LoadCurl(): any thread (once); Curl(): after it.
#pragma once

#include <curl/curl.h>

#include <string>

namespace oxide::backend {

struct CurlLibrary {
  decltype(&::curl_global_init) global_init;
  decltype(&::curl_easy_init) easy_init;
  decltype(&::curl_easy_setopt) easy_setopt;
  decltype(&::curl_easy_getinfo) easy_getinfo;
  decltype(&::curl_easy_perform) easy_perform;  // blocking: start-up only (node identity)
  decltype(&::curl_easy_cleanup) easy_cleanup;
  decltype(&::curl_easy_strerror) easy_strerror;
  decltype(&::curl_multi_init) multi_init;
  decltype(&::curl_multi_setopt) multi_setopt;
  decltype(&::curl_multi_add_handle) multi_add_handle;
  decltype(&::curl_multi_remove_handle) multi_remove_handle;
  decltype(&::curl_multi_socket_action) multi_socket_action;
  decltype(&::curl_multi_info_read) multi_info_read;
  decltype(&::curl_multi_cleanup) multi_cleanup;
  decltype(&::curl_slist_append) slist_append;
  decltype(&::curl_slist_free_all) slist_free_all;
};

// The library's file name: Debian's libcurl4 package.
inline constexpr const char* kCurlLibraryFile = "libcurl.so.4";

// Opens libcurl and runs curl_global_init once; on later calls returns the first outcome. OK, or
// FAILED_PRECONDITION-worthy text in `error` naming what is missing.
bool LoadCurl(std::string* error);
// The loaded functions; only after LoadCurl() returned true.
const CurlLibrary& Curl();

}  // namespace oxide::backend
