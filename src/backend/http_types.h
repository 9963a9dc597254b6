// The plain request and response values that travel between the Oxide client and its HTTP
// transports (curl multi, retries). Value types: any thread, but transports use them on the
// loop thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace oxide::backend {

enum class HttpMethod { kGet, kPost, kDelete };
const char* HttpMethodName(HttpMethod method);

struct HttpRequest {
  HttpMethod method = HttpMethod::kGet;
  // Path and query, already percent-encoded, e.g. "/v1/disks/pv-a?project=demo".
  std::string target;
  std::string body;  // JSON; empty = no body
  // May the retry layer repeat it after a failure whose outcome is unknown? GET and DELETE are,
  // POST only where Oxide documents the call as idempotent (see oxide_client.cc).
  bool idempotent = true;
  // Per attempt; zero = the transport's default.
  std::chrono::milliseconds timeout{0};
  // The Oxide API's operationId (e.g. "disk_create"): the metrics label, never an id or name.
  const char* operation = "other";
};

// Why no HTTP answer arrived.
enum class TransportError {
  kNone,
  kTimeout,  // the per-request timeout expired
  kConnect,  // could not connect / connection lost / nothing received
  kTls,      // TLS handshake or certificate verification failed
  kOther,    // any other libcurl failure
};

struct HttpResponse {
  int status = 0;  // 0 when transport_error != kNone
  std::string body;
  std::string request_id;                           // x-request-id header
  std::optional<std::chrono::seconds> retry_after;  // Retry-After header (delta-seconds form)
  TransportError transport_error = TransportError::kNone;
  std::string transport_message;  // libcurl's explanation when transport_error != kNone
  int attempts = 1;               // filled in by the retry layer
  long new_connections = 0;       // connections libcurl opened for this transfer
  uint64_t token_generation = 0;  // ApiToken::generation() of the token sent (0: none)
};

using HttpCallback = std::function<void(HttpResponse)>;

// The HTTP status ("200", "503") or the kind of transport failure ("timeout", "connect", "tls",
// "error"): a metrics label from a small fixed set.
std::string OutcomeLabel(const HttpResponse& response);

// Something that sends HTTP requests to the Oxide API and calls back on the loop thread.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  // Loop thread. `done` is called exactly once on the loop thread, never from within Send(),
  // unless the transport is destroyed first: then it is dropped uncalled. Do not destroy the
  // transport from inside `done`.
  virtual void Send(HttpRequest request, HttpCallback done) = 0;
};

}  // namespace oxide::backend
