// The blocking steps of removing the node startup taint (csi.oxide.computer/agent-not-ready) from
// this node's Node once node-driver-registrar has registered the driver: read the Node (no taint:
// nothing to do), read the CSINode (the driver not listed yet: wait), then one JSON patch whose
// `test` op makes the API server refuse it if spec.taints changed since the read (a concurrent
// taint change is never overwritten; the caller re-reads and tries again). The pure helpers build
// and read the JSON; RemoveStartupTaintOnce makes the exchanges (node/kubernetes_api.h).
// Blocking: a libuv worker thread (or a test thread); never a loop thread. The retries and their
// timing are node/startup_taint_removal.h's.
#pragma once

#include <optional>
#include <string>

#include "node/kubernetes_api.h"
#include "util/status.h"

namespace oxide::node {

// The taint new nodes are given (kubelet --register-with-taints=<key>=:NoExecute) so that no pod
// with an Oxide volume lands on them before the plugin is registered.
inline constexpr const char* kAgentNotReadyTaint = "csi.oxide.computer/agent-not-ready";
// A JSON patch (RFC 6902), the kind the API server applies with `test` ops.
inline constexpr const char* kJsonPatchContentType = "application/json-patch+json";

enum class TaintStep {
  kAbsent,         // the Node does not carry the taint (any effect): nothing to do
  kNotRegistered,  // the taint is there, but the CSINode does not list the driver yet
  kRemoved,        // the patch took the taint off
  kConflict,       // spec.taints changed between the read and the patch (HTTP 422 or 409)
};
const char* TaintStepName(TaintStep step);

// The JSON patch that takes every kAgentNotReadyTaint entry out of the Node's spec.taints and
// keeps the others in order: [{"op":"test","path":"/spec/taints","value":<as read>},
// {"op":"replace","path":"/spec/taints","value":<the rest>}]. nullopt when the Node does not carry
// the taint. An error for a body that is not a Node object.
StatusOr<std::optional<std::string>> TaintRemovalPatch(const std::string& node_json);

// Whether the CSINode's spec.drivers lists `driver_name` (node-driver-registrar's registration
// through the kubelet). An error for a body that is not a CSINode object.
StatusOr<bool> CsiNodeListsDriver(const std::string& csinode_json, const std::string& driver_name);

// One pass: GET /api/v1/nodes/<node>; with the taint, GET
// /apis/storage.k8s.io/v1/csinodes/<node>; once the driver is listed, PATCH
// /api/v1/nodes/<node>. Errors name the request and say what to do (RBAC for a 403).
StatusOr<TaintStep> RemoveStartupTaintOnce(const KubernetesApiOptions& options,
                                           const std::string& node_name,
                                           const std::string& driver_name);

}  // namespace oxide::node
