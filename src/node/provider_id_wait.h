// The node plugin's wait, at first boot, for the cloud controller manager to set this node's
// spec.providerID: instead of registering "name:<node name>" (an id that would change at the next
// restart), it re-reads the Node with backoff (1 s doubling to 10 s) and logs one line every 30 s
// until the Node has a providerID (its uuid is the id), or, without --wait-for-provider-id, the
// Node has lost the uninitialized taint with no providerID (the name after all, with a warning).
// Driven by Clock timers, so tests advance a ManualClock. Loop thread only (the thread that runs
// the clock's timers); `read` may complete inside the call or later on that thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "loop/clock.h"
#include "node/backoff_retry.h"
#include "node/kubernetes_node_reader.h"
#include "util/log.h"
#include "util/status.h"

namespace oxide::node {

class ProviderIdWait {
 public:
  struct Options {
    std::string node_name;
    bool wait_for_provider_id = false;  // --wait-for-provider-id: wait even without the taint
    std::chrono::milliseconds first_retry{1000};
    std::chrono::milliseconds max_retry{10000};
    std::chrono::milliseconds report_every{30000};
  };
  using ReadDone = std::function<void(StatusOr<KubernetesNode>)>;
  // Starts one read of the Node and calls `done` once, on the loop thread.
  using ReadNode = std::function<void(ReadDone done)>;
  // The node id (lower-case uuid or "name:<node name>"), or why there will be none (a providerID
  // not of the form oxide://<uuid>, a name that cannot be an instance name). Called at most once;
  // it must not destroy this object.
  using Finished = std::function<void(StatusOr<std::string>)>;

  ProviderIdWait(Clock* clock, Options options, ReadNode read, Finished finished);
  // Destroying it cancels the timers; a read still in flight completes into nothing.
  ProviderIdWait(const ProviderIdWait&) = delete;
  ProviderIdWait& operator=(const ProviderIdWait&) = delete;

  // Starts waiting, given the read that showed the Node must wait (MustWaitForProviderId): logs
  // the first line now, reads again after `first_retry`.
  void Start(const KubernetesNode& first_read);
  // Stops waiting (a signal): no more reads or lines, `finished` is not called.
  void Stop() { retry_.Stop(); }

  bool waiting() const { return retry_.running(); }
  int reads() const { return retry_.attempts(); }  // re-reads started since Start

 private:
  void ReadNow();
  void OnRead(StatusOr<KubernetesNode> node);
  void Report();
  void Finish(StatusOr<std::string> id);

  const Options options_;
  ReadNode read_;
  Finished finished_;

  KubernetesNode last_node_;
  std::string last_error_;  // of the latest read; empty when it succeeded
  BackoffRetry retry_;
};

}  // namespace oxide::node
