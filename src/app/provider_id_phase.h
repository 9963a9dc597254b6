// The node plugin's wait for its Node's spec.providerID (node/provider_id_wait.h), run by
// RunPlugin before the state database, the plugin's loop and the CSI socket exist, so that the
// registrar cannot register the node under a name that would change. A libuv loop of its own with
// the real clock and SIGTERM/SIGINT; each Node read runs on libuv's worker pool, so neither the
// timers nor a signal wait for the API server, and a signal cancels a read in flight within about
// a second. It serves /metrics and /healthz meanwhile (when the plugin serves metrics), so
// liveness sees a plugin that waits, not a dead one. Main thread only.
#pragma once

#include "config/settings.h"
#include "node/instance_identity.h"
#include "util/status.h"

namespace oxide {

enum class ProviderIdOutcome {
  kIdentified,  // identity->node_id is set
  kStopped,     // SIGTERM or SIGINT ended the wait: exit cleanly without serving
};

// Waits until `identity` (awaits_provider_id, from ResolveNodeIdentity) has a node id. An error
// (a providerID not of the form oxide://<uuid>, ...) stops the start.
StatusOr<ProviderIdOutcome> AwaitProviderId(const Settings& settings, node::NodeIdentity* identity);

}  // namespace oxide
