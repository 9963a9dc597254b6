#include "node/provider_id_wait.h"

#include <utility>

#include "node/instance_identity.h"
#include "util/log.h"

namespace oxide::node {

ProviderIdWait::ProviderIdWait(Clock* clock, Options options, ReadNode read, Finished finished)
    : options_(std::move(options)),
      read_(std::move(read)),
      finished_(std::move(finished)),
      retry_(
          clock, BackoffRetry::TimingOf(options_), [this] { ReadNow(); }, [this] { Report(); }) {}

void ProviderIdWait::Start(const KubernetesNode& first_read) {
  last_node_ = first_read;
  retry_.Start();
  Report();
  retry_.RetryLater();
}

void ProviderIdWait::ReadNow() {
  read_(retry_.Guard<StatusOr<KubernetesNode>>(
      [this](StatusOr<KubernetesNode> node) { OnRead(std::move(node)); }));
}

void ProviderIdWait::OnRead(StatusOr<KubernetesNode> node) {
  const log::Number waited = retry_.WaitedSeconds();
  if (!node.ok()) {
    // The API server may be busy or restarting while the cluster comes up: keep trying; the next
    // report line says what the last read met.
    last_error_ = node.status().message();
  } else {
    last_error_.clear();
    last_node_ = *node;
    if (!node->provider_id.empty()) {
      log::Info("Node " + options_.node_name + " has spec.providerID now",
                {{"provider_id", node->provider_id}, {"waited_seconds", waited}});
      Finish(NodeIdFromKubernetesNode(node->provider_id, options_.node_name));
      return;
    }
    if (!MustWaitForProviderId(*node, options_.wait_for_provider_id)) {
      log::Warn("Node " + options_.node_name + " no longer carries the taint " +
                    kUninitializedTaint +
                    " but has no spec.providerID: using the node name as the instance name "
                    "(--wait-for-provider-id waits instead)",
                {{"waited_seconds", waited}});
      Finish(NodeIdFromKubernetesNode("", options_.node_name));
      return;
    }
  }
  retry_.RetryLater();
}

void ProviderIdWait::Report() {
  const log::Number waited = retry_.WaitedSeconds();
  const std::string why = last_node_.uninitialized
                              ? std::string("; taint ") + kUninitializedTaint + " present"
                              : std::string("; --wait-for-provider-id is set");
  const std::string message =
      "waiting for the cloud controller manager to set spec.providerID on Node " +
      options_.node_name + why;
  // The taint is the ordinary first boot; a wait without it, or a failing read, may need a person.
  if (last_node_.uninitialized && last_error_.empty()) {
    log::Info(message, {{"waited_seconds", waited}});
  } else {
    log::Warn(message, {{"waited_seconds", waited}, {"last_read_error", last_error_}});
  }
}

void ProviderIdWait::Finish(StatusOr<std::string> id) {
  retry_.Stop();
  finished_(std::move(id));
}

}  // namespace oxide::node
