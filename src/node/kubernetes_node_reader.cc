#include "node/kubernetes_node_reader.h"

#include <nlohmann/json.hpp>

#include "config/validation.h"
#include "util/utf8_cut.h"

namespace oxide::node {
namespace {

using nlohmann::json;

// An HTTP answer other than 200, as a message for a person.
Status Describe(const KubernetesResponse& response, const KubernetesApiOptions& options,
                const std::string& node_name) {
  const std::string tried =
      response.attempts > 1 ? " (" + std::to_string(response.attempts) + " attempts)" : "";
  const std::string http = "HTTP " + std::to_string(response.status);
  switch (response.status) {
    case 200:
      return Status::Ok();
    case 401:
      return Status(StatusCode::kPermissionDenied,
                    http + ": the API server refused the service account token in " +
                        options.credentials_dir + "/token" +
                        KubernetesStatusMessage(response.body));
    case 403:
      return Status(StatusCode::kPermissionDenied,
                    http +
                        ": the node plugin's service account may not read Node objects; grant it "
                        "RBAC \"get\" "
                        "on \"nodes\" (a ClusterRole bound to the service account)" +
                        KubernetesStatusMessage(response.body));
    case 404:
      return NotFound(http + ": there is no Node named " + node_name +
                      "; NODE_NAME must be this node's name (downward API spec.nodeName)");
    default:
      return Unavailable(http + tried + KubernetesStatusMessage(response.body));
  }
}

StatusOr<KubernetesNode> ParseNode(const std::string& body) {
  json node = json::parse(body, nullptr, false);
  if (node.is_discarded() || !node.is_object()) {
    return FailedPrecondition("the answer is not JSON: not a Node object");
  }
  if (node.contains("kind") && node["kind"] != "Node") {
    return FailedPrecondition("the answer is not a Node object (kind " +
                              CutUtf8(node["kind"].dump(), 64) + ")");
  }
  KubernetesNode result;
  if (!node.contains("spec")) return result;
  const json& spec = node["spec"];
  if (!spec.is_object()) return FailedPrecondition("the Node's spec is not an object");
  if (spec.contains("taints") && !spec["taints"].is_null()) {
    if (!spec["taints"].is_array())
      return FailedPrecondition("the Node's spec.taints is not a list");
    for (const json& taint : spec["taints"]) {
      if (taint.is_object() && taint.contains("key") && taint["key"] == kUninitializedTaint) {
        result.uninitialized = true;
      }
    }
  }
  if (!spec.contains("providerID") || spec["providerID"].is_null()) return result;
  if (!spec["providerID"].is_string()) {
    return FailedPrecondition("the Node's spec.providerID is not a string");
  }
  result.provider_id = spec["providerID"].get<std::string>();
  return result;
}

}  // namespace

StatusOr<KubernetesNode> ReadKubernetesNode(const KubernetesApiOptions& options,
                                            const std::string& node_name) {
  const std::string path = "/api/v1/nodes/" + node_name;
  auto failed = [&path](const Status& status) {
    return Status(status.code(), "GET " + path + ": " + status.message());
  };
  if (!IsKubernetesNodeName(node_name)) {
    return InvalidArgument("\"" + CutUtf8(node_name, 128) + "\" is not a Kubernetes node name");
  }
  StatusOr<KubernetesResponse> response =
      CallKubernetesApi(options, {.method = "GET", .path = path, .content_type = "", .body = ""});
  if (!response.ok()) return failed(response.status());
  Status outcome = Describe(*response, options, node_name);
  if (!outcome.ok()) return failed(outcome);
  StatusOr<KubernetesNode> node = ParseNode(response->body);
  if (!node.ok()) return failed(node.status());
  return node;
}

}  // namespace oxide::node
