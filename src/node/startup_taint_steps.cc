#include "node/startup_taint_steps.h"

#include <nlohmann/json.hpp>

#include "config/validation.h"
#include "util/utf8_cut.h"

namespace oxide::node {
namespace {

using nlohmann::json;

StatusOr<json> ParseObject(const std::string& body, const std::string& kind) {
  json object = json::parse(body, nullptr, false);
  if (object.is_discarded() || !object.is_object()) {
    return FailedPrecondition("the answer is not JSON: not a " + kind + " object");
  }
  if (object.contains("kind") && object["kind"] != kind) {
    return FailedPrecondition("the answer is not a " + kind + " object (kind " +
                              CutUtf8(object["kind"].dump(), 64) + ")");
  }
  if (object.contains("spec") && !object["spec"].is_null() && !object["spec"].is_object()) {
    return FailedPrecondition("the " + kind + "'s spec is not an object");
  }
  return object;
}

bool IsAgentNotReady(const json& taint) {
  return taint.is_object() && taint.contains("key") && taint["key"] == kAgentNotReadyTaint;
}

// What an HTTP status other than the expected ones means, for a person.
Status Unexpected(const KubernetesResponse& response, const std::string& rbac) {
  const std::string http = "HTTP " + std::to_string(response.status);
  const std::string server = KubernetesStatusMessage(response.body);
  switch (response.status) {
    case 401:
      return Status(StatusCode::kPermissionDenied,
                    http + ": the API server refused the service account token" + server);
    case 403:
      return Status(StatusCode::kPermissionDenied,
                    http + ": the node plugin's service account lacks RBAC " + rbac +
                        " (deploy/kubernetes/base/rbac-node.yaml)" + server);
    default: {
      const std::string tried =
          response.attempts > 1 ? " (" + std::to_string(response.attempts) + " attempts)" : "";
      return Unavailable(http + tried + server);
    }
  }
}

}  // namespace

const char* TaintStepName(TaintStep step) {
  switch (step) {
    case TaintStep::kAbsent:
      return "absent";
    case TaintStep::kNotRegistered:
      return "not_registered";
    case TaintStep::kRemoved:
      return "removed";
    case TaintStep::kConflict:
      return "conflict";
  }
  return "unknown";
}

StatusOr<std::optional<std::string>> TaintRemovalPatch(const std::string& node_json) {
  StatusOr<json> node = ParseObject(node_json, "Node");
  if (!node.ok()) return node.status();
  if (!node->contains("spec") || (*node)["spec"].is_null()) return std::optional<std::string>();
  const json& spec = (*node)["spec"];
  if (!spec.contains("taints") || spec["taints"].is_null()) return std::optional<std::string>();
  const json& taints = spec["taints"];
  if (!taints.is_array()) return FailedPrecondition("the Node's spec.taints is not a list");
  json kept = json::array();
  for (const json& taint : taints) {
    if (!IsAgentNotReady(taint)) kept.push_back(taint);
  }
  if (kept.size() == taints.size()) return std::optional<std::string>();
  json patch = json::array({{{"op", "test"}, {"path", "/spec/taints"}, {"value", taints}},
                            {{"op", "replace"}, {"path", "/spec/taints"}, {"value", kept}}});
  return std::optional<std::string>(patch.dump());
}

StatusOr<bool> CsiNodeListsDriver(const std::string& csinode_json, const std::string& driver_name) {
  StatusOr<json> csinode = ParseObject(csinode_json, "CSINode");
  if (!csinode.ok()) return csinode.status();
  if (!csinode->contains("spec") || (*csinode)["spec"].is_null()) return false;
  const json& spec = (*csinode)["spec"];
  if (!spec.contains("drivers") || spec["drivers"].is_null()) return false;
  if (!spec["drivers"].is_array()) {
    return FailedPrecondition("the CSINode's spec.drivers is not a list");
  }
  for (const json& driver : spec["drivers"]) {
    if (driver.is_object() && driver.contains("name") && driver["name"] == driver_name) {
      return true;
    }
  }
  return false;
}

StatusOr<TaintStep> RemoveStartupTaintOnce(const KubernetesApiOptions& options,
                                           const std::string& node_name,
                                           const std::string& driver_name) {
  if (!IsKubernetesNodeName(node_name)) {
    return InvalidArgument("\"" + CutUtf8(node_name, 128) + "\" is not a Kubernetes node name");
  }
  const std::string node_path = "/api/v1/nodes/" + node_name;
  auto failed = [](const std::string& request, const Status& status) {
    return Status(status.code(), request + ": " + status.message());
  };

  // 1. The Node: does it carry the taint?
  const std::string get_node = "GET " + node_path;
  StatusOr<KubernetesResponse> node = CallKubernetesApi(
      options, {.method = "GET", .path = node_path, .content_type = "", .body = ""});
  if (!node.ok()) return failed(get_node, node.status());
  if (node->status == 404) {
    return failed(get_node, NotFound("HTTP 404: there is no Node named " + node_name +
                                     "; NODE_NAME must be this node's name (downward API "
                                     "spec.nodeName)"));
  }
  if (node->status != 200) return failed(get_node, Unexpected(*node, "\"get\" on \"nodes\""));
  StatusOr<std::optional<std::string>> patch = TaintRemovalPatch(node->body);
  if (!patch.ok()) return failed(get_node, patch.status());
  if (!patch->has_value()) return TaintStep::kAbsent;

  // 2. The CSINode: has node-driver-registrar registered the driver through the kubelet?
  const std::string csinode_path = "/apis/storage.k8s.io/v1/csinodes/" + node_name;
  const std::string get_csinode = "GET " + csinode_path;
  StatusOr<KubernetesResponse> csinode = CallKubernetesApi(
      options, {.method = "GET", .path = csinode_path, .content_type = "", .body = ""});
  if (!csinode.ok()) return failed(get_csinode, csinode.status());
  // The kubelet creates the CSINode when it starts; until then no driver is registered.
  if (csinode->status == 404) return TaintStep::kNotRegistered;
  if (csinode->status != 200) {
    return failed(get_csinode,
                  Unexpected(*csinode, "\"get\" on \"csinodes\" (API group storage.k8s.io)"));
  }
  StatusOr<bool> registered = CsiNodeListsDriver(csinode->body, driver_name);
  if (!registered.ok()) return failed(get_csinode, registered.status());
  if (!*registered) return TaintStep::kNotRegistered;

  // 3. The patch, refused by its `test` op if spec.taints changed since step 1.
  const std::string patch_node = "PATCH " + node_path;
  StatusOr<KubernetesResponse> patched =
      CallKubernetesApi(options, {.method = "PATCH",
                                  .path = node_path,
                                  .content_type = kJsonPatchContentType,
                                  .body = **patch});
  if (!patched.ok()) return failed(patch_node, patched.status());
  switch (patched->status) {
    case 200:
      return TaintStep::kRemoved;
    case 409:  // a Conflict Status: the Node changed meanwhile
    case 422:  // the `test` op failed (kube-apiserver answers 422 Invalid)
      return TaintStep::kConflict;
    case 404:
      return failed(patch_node, NotFound("HTTP 404: the Node " + node_name + " is gone"));
    default:
      return failed(patch_node, Unexpected(*patched, "\"patch\" on \"nodes\""));
  }
}

}  // namespace oxide::node
