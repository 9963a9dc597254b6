// The node plugin's CSI node id: which Oxide instance this node runs on, from the first of the
// configured sources (Settings.instance_id_sources) that answers: env (OXIDE_INSTANCE_ID), file
// (--instance-metadata-file), kubernetes (this node's Node object: spec.providerID
// "oxide://<uuid>", or, when the Node has none, "name:<node name>" for the controller to look up
// as an instance name; but a Node that still awaits its providerID (MustWaitForProviderId) makes
// the start wait for it, node/provider_id_wait.h). Blocking (reads a file, may ask the Kubernetes
// API server with bounded timeouts): call on the main thread at node start, before the event loop
// runs.
#pragma once

#include <string>

#include "config/settings.h"
#include "node/kubernetes_node_reader.h"
#include "util/status.h"

namespace oxide::node {

struct NodeIdentity {
  std::string node_id;  // a lower-case UUID, or "name:<instance name>"
  std::string source;   // the source that answered: "env", "file" or "kubernetes"
  // The sources tried before it that failed (not the skipped ones), "source: why; ...": worth a
  // warning, since the answer came from further down the list than configured.
  std::string earlier_failures;
  // The kubernetes source read a Node without spec.providerID that it must wait for
  // (MustWaitForProviderId): node_id is empty, `node` is what was read, and the start waits
  // (node/provider_id_wait.h) instead of asking the sources listed after it.
  bool awaits_provider_id = false;
  KubernetesNode node;
};

// How the kubernetes source reaches the API server (in-cluster settings, time limits).
KubernetesApiOptions KubernetesOptionsFromSettings(const Settings& settings);

// True when a Node without spec.providerID must not give "name:<node name>" yet: it carries the
// cloud controller manager's uninitialized taint, or `wait_for_provider_id`
// (--wait-for-provider-id) is set. False once it has a providerID.
bool MustWaitForProviderId(const KubernetesNode& node, bool wait_for_provider_id);

// The node id from a Node's spec.providerID and name: "oxide://<uuid>" gives the lower-case uuid;
// an empty providerID gives "name:<node name>" (the node name must be an Oxide instance name);
// any other providerID is an error naming it.
StatusOr<std::string> NodeIdFromKubernetesNode(const std::string& provider_id,
                                               const std::string& node_name);

// The file source: reads and parses the instance metadata file at `path` (at most 64 KiB;
// node/instance_metadata.h). NOT_FOUND when it does not exist (an optional hostPath left
// empty); INVALID_ARGUMENT naming the setting for anything else wrong.
StatusOr<std::string> ReadInstanceMetadataFile(const std::string& path);

// Tries the sources in order. When none answers: FAILED_PRECONDITION with one line naming every
// source and what it said ("no Oxide instance id: env: skipped: OXIDE_INSTANCE_ID is not set;
// file: ...; kubernetes: GET /api/v1/nodes/n1: HTTP 403 ...").
StatusOr<NodeIdentity> ResolveNodeIdentity(const Settings& settings);

}  // namespace oxide::node
