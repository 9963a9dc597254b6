// One blocking exchange with the Kubernetes API server under the pod's service account
// (in-cluster config): https://HOST:PORT<path>, TLS verified against the service account's ca.crt
// (never unverified), bearer token from its token file (registered as a secret, never logged). One
// libcurl easy transfer per attempt with bounded connect and total timeouts, a few attempts on a
// failed connect or a 5xx answer, a capped answer size and an optional cancel flag. Used by the
// Node reader (node/kubernetes_node_reader.h) and the startup taint removal
// (node/startup_taint_steps.h). Blocking: the main thread before the plugin's loop runs, or a
// libuv worker thread; never a loop thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include "util/status.h"

namespace oxide::node {

struct KubernetesApiOptions {
  std::string host;             // KUBERNETES_SERVICE_HOST (name, IPv4 or IPv6 address)
  std::string port = "443";     // KUBERNETES_SERVICE_PORT
  std::string credentials_dir;  // holds `token` and `ca.crt`
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds total_timeout{10000};  // per attempt
  int attempts = 3;                                // on a failed connect or a 5xx answer
  std::chrono::milliseconds retry_pause{500};
  size_t max_response_bytes = 1 << 20;  // a Node object is a few KiB
  // When set: another thread may store true to end a transfer in progress within about a second
  // (an error saying it was cancelled). Must outlive the call.
  const std::atomic<bool>* cancel = nullptr;
};

struct KubernetesRequest {
  std::string method = "GET";  // GET or PATCH
  std::string path;            // "/api/v1/nodes/<name>"
  std::string content_type;    // of `body`; a PATCH needs one (application/json-patch+json)
  std::string body;
};

// Any HTTP answer, whatever its status: the caller knows what each status means for its request.
struct KubernetesResponse {
  long status = 0;
  std::string body;
  int attempts = 1;  // transfers made (more than one after a failed connect or a 5xx)
};

// The answer, or why there is none (no token or CA, TLS failure, no connection, time limit,
// cancelled, answer too large). Messages do not name the request: the caller prefixes it.
StatusOr<KubernetesResponse> CallKubernetesApi(const KubernetesApiOptions& options,
                                               const KubernetesRequest& request);

// " (<message>)" of a Kubernetes Status object in an error answer (cut to 300 bytes), or "".
std::string KubernetesStatusMessage(const std::string& body);

// "https://HOST:PORT" (IPv6 in brackets), for messages.
std::string KubernetesBaseUrl(const KubernetesApiOptions& options);

}  // namespace oxide::node
