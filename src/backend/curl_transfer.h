// One HTTP exchange as a libcurl easy handle: its options (URL, headers, TLS, timeouts), the
// body and header callbacks (x-request-id, Retry-After) and the classification of its outcome.
// The easy handle and the header lists may be lent by the transport (a pool of reset handles,
// lists built once per API token). Owned and used by CurlMultiTransport on the loop thread.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "backend/http_types.h"

namespace oxide::backend {

struct TransportOptions {
  std::string base_url;  // e.g. "https://oxide.example.com" (no trailing slash needed)
  // Secret: sent as "Authorization: Bearer <token>", never logged. The token at start; an
  // ApiToken given to the transport replaces it (a token file that is watched).
  std::string token;
  std::string ca_file;    // private CA bundle; empty = the system's
  bool insecure = false;  // no TLS verification (tests only; the plugin warns at start)
  long max_host_connections = 32;
  // Transfers handed to libcurl at once; the rest wait in the transport's FIFO. All transfers
  // go to one host over HTTP/1.1, so at most max_host_connections of them can run: the cap in
  // effect is the smaller of the two (a transfer libcurl parks for want of a connection would
  // only hold an easy handle and its buffers, and run its timeout while it waits).
  size_t max_in_flight = 256;
  std::chrono::milliseconds default_timeout{60000};
  std::chrono::milliseconds connect_timeout{10000};
};

// The request headers every transfer sends, built once per API token (libcurl reads a list
// during the transfer without copying it, so each transfer holds the lists it was sent with).
class CurlHeaders {
 public:
  // `token_generation`: ApiToken::generation() of `token`, reported in each response.
  CurlHeaders(const std::string& token, uint64_t token_generation);
  ~CurlHeaders();
  CurlHeaders(const CurlHeaders&) = delete;
  CurlHeaders& operator=(const CurlHeaders&) = delete;

  curl_slist* without_body() const { return without_body_; }
  curl_slist* with_body() const { return with_body_; }  // adds Content-Type: application/json
  const std::string& user_agent() const { return user_agent_; }
  uint64_t token_generation() const { return token_generation_; }

 private:
  curl_slist* without_body_ = nullptr;
  curl_slist* with_body_ = nullptr;
  std::string user_agent_;
  uint64_t token_generation_;
};

struct CurlTransfer {
  HttpRequest request;
  HttpCallback done;
  CURL* easy = nullptr;
  std::string url;
  HttpResponse response;
  char error[CURL_ERROR_SIZE] = {};
  int sends = 0;  // times libcurl was about to send the request (see OnPrerequest)
  std::shared_ptr<const CurlHeaders> headers;  // the lists libcurl reads while this runs

  CurlTransfer() = default;
  ~CurlTransfer();
  CurlTransfer(const CurlTransfer&) = delete;
  CurlTransfer& operator=(const CurlTransfer&) = delete;

  // Configures `reuse` (a handle an earlier transfer of the same transport gave back; it becomes
  // this transfer's) or, when null, a new easy handle (CURLOPT_PRIVATE = this). False, with
  // `response` describing the failure, when libcurl refuses.
  bool Prepare(const TransportOptions& options, std::shared_ptr<const CurlHeaders> lists,
               CURL* reuse);
  // Hands the easy handle back, options kept, for another transfer instead of freeing it with us
  // (a reset would free its options and the next transfer would set them all again).
  CURL* TakeEasy();
  // Records the outcome of the finished transfer in `response`.
  void Finish(CURLcode result);
};

}  // namespace oxide::backend
