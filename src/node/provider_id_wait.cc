#include "node/provider_id_wait.h"

#include <algorithm>
#include <utility>

#include "node/instance_identity.h"
#include "util/log.h"

namespace oxide::node {

ProviderIdWait::ProviderIdWait(Clock* clock, Options options, ReadNode read, Finished finished)
    : clock_(clock),
      options_(std::move(options)),
      read_(std::move(read)),
      finished_(std::move(finished)) {}

ProviderIdWait::~ProviderIdWait() {
  CancelTimers();
  *self_ = nullptr;
}

void ProviderIdWait::Start(const KubernetesNode& first_read) {
  waiting_ = true;
  since_ = clock_->Now();
  last_node_ = first_read;
  next_retry_ = options_.first_retry;
  Report();
  read_timer_ = clock_->StartTimer(next_retry_, [this] { ReadNow(); });
}

void ProviderIdWait::Stop() {
  waiting_ = false;
  CancelTimers();
}

void ProviderIdWait::ReadNow() {
  read_timer_ = 0;
  ++reads_;
  read_([weak = std::weak_ptr<ProviderIdWait*>(self_)](StatusOr<KubernetesNode> node) {
    std::shared_ptr<ProviderIdWait*> self = weak.lock();
    if (self && *self != nullptr) (*self)->OnRead(std::move(node));
  });
}

void ProviderIdWait::OnRead(StatusOr<KubernetesNode> node) {
  if (!waiting_) return;
  const log::Number waited = WaitedSeconds();
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
  next_retry_ = std::min(next_retry_ * 2, options_.max_retry);
  read_timer_ = clock_->StartTimer(next_retry_, [this] { ReadNow(); });
}

void ProviderIdWait::Report() {
  const log::Number waited = WaitedSeconds();
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
  report_timer_ = clock_->StartTimer(options_.report_every, [this] { Report(); });
}

void ProviderIdWait::Finish(StatusOr<std::string> id) {
  waiting_ = false;
  CancelTimers();
  finished_(std::move(id));
}

log::Number ProviderIdWait::WaitedSeconds() const {
  return log::Num(static_cast<int64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(clock_->Now() - since_).count()));
}

void ProviderIdWait::CancelTimers() {
  for (Clock::TimerId* timer : {&read_timer_, &report_timer_}) {
    if (*timer != 0) clock_->CancelTimer(*timer);
    *timer = 0;
  }
}

}  // namespace oxide::node
