// Reads this node's Node object from the Kubernetes API server with the pod's service account
// (in-cluster config): GET https://HOST:PORT/api/v1/nodes/<name>, TLS verified against the
// service account's ca.crt (never unverified), bearer token from its token file. One blocking
// libcurl easy transfer with bounded connect and total timeouts, a couple of retries on a failed
// connect or a 5xx, and a capped response size. Blocking: called on the main thread at node start,
// before the event loop runs (nothing else is served yet), or on a libuv worker thread while the
// start waits for spec.providerID (app/provider_id_phase.h); never from a loop thread.
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

// The taint the cloud controller manager removes once it has initialised a Node (set by the
// kubelet started with --cloud-provider=external).
inline constexpr const char* kUninitializedTaint = "node.cloudprovider.kubernetes.io/uninitialized";

struct KubernetesNode {
  std::string provider_id;  // spec.providerID; empty when the Node has none
  // spec.taints holds kUninitializedTaint (with any effect): the cloud controller manager has not
  // initialised the Node yet, so its spec.providerID is still to come.
  bool uninitialized = false;
};

// The Node called `node_name`. Errors name the request ("GET /api/v1/nodes/<name>: ...") and say
// what to do (RBAC for 403, NODE_NAME for 404, the CA for a TLS failure). The token is registered
// with log::RegisterSecret and never appears in a message.
StatusOr<KubernetesNode> ReadKubernetesNode(const KubernetesApiOptions& options,
                                            const std::string& node_name);

}  // namespace oxide::node
