// Reads this node's Node object from the Kubernetes API server with the pod's service account:
// GET /api/v1/nodes/<name> through node/kubernetes_api.h (TLS verified against the service
// account's ca.crt, bearer token, bounded transfers, a couple of retries on a failed connect or a
// 5xx). Blocking: called on the main thread at node start,
// before the event loop runs (nothing else is served yet), or on a libuv worker thread while the
// start waits for spec.providerID (app/node_kubernetes.h); never from a loop thread.
#pragma once

#include <string>

#include "node/kubernetes_api.h"
#include "util/status.h"

namespace oxide::node {

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
