// One HTTP exchange as a libcurl easy handle: its options (URL, headers, TLS, timeouts), the
// body and header callbacks (x-request-id, Retry-After) and the classification of its outcome.
// Owned and used by CurlMultiTransport on the loop thread.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <string>

#include "backend/http_types.h"

namespace oxide::backend {

struct TransportOptions {
  std::string base_url;   // e.g. "https://oxide.example.com" (no trailing slash needed)
  std::string token;      // secret: sent as "Authorization: Bearer <token>", never logged
  std::string ca_file;    // private CA bundle; empty = the system's
  bool insecure = false;  // no TLS verification (tests only; the plugin warns at start)
  long max_host_connections = 32;
  size_t max_in_flight = 256;
  std::chrono::milliseconds default_timeout{60000};
  std::chrono::milliseconds connect_timeout{10000};
};

struct CurlTransfer {
  HttpRequest request;
  HttpCallback done;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string url;
  HttpResponse response;
  char error[CURL_ERROR_SIZE] = {};

  CurlTransfer() = default;
  ~CurlTransfer();
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;

  // Creates and configures the easy handle (CURLOPT_PRIVATE = this). False, with `response`
  // describing the failure, when libcurl refuses.
  bool Prepare(const TransportOptions& options);
  // Records the outcome of the finished transfer in `response`.
  void Finish(CURLcode result);
};

}  // namespace oxide::backend
