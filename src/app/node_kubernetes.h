// The node plugin's exchanges with the Kubernetes API server around its start: KubernetesCall, one
// exchange at a time on libuv's worker pool (the startup taint removal, node_assembly.h, runs its
// passes through it too), and AwaitProviderId, the wait for the Node's spec.providerID before the
// plugin serves. AwaitProviderId: main thread only; KubernetesCall: its loop's thread only (but
// the exchange itself).
#pragma once

#include <uv.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "config/settings.h"
#include "node/instance_identity.h"
#include "node/kubernetes_api.h"
#include "util/status.h"

namespace oxide {

// One exchange with the Kubernetes API server at a time on libuv's worker pool: the blocking
// exchange runs on a worker thread with the settings' API options (one attempt: its caller
// retries) and a cancel flag of its own; its outcome comes back on the loop thread, so the loop
// never waits for the API server. Cancel() ends an exchange in flight within about a second and
// drops its outcome.
class KubernetesCall {
 public:
  // `uv` and `settings` outlive this object.
  KubernetesCall(uv_loop_t* uv, const Settings& settings);
  // Cancel().
  ~KubernetesCall();
  KubernetesCall(const KubernetesCall&) = delete;
  KubernetesCall& operator=(const KubernetesCall&) = delete;

  // Runs `exchange` on a worker thread, then `done` with its outcome on the loop thread unless
  // cancelled meanwhile. Should libuv refuse the work, `done` gets UNAVAILABLE "cannot queue
  // <what>" at once.
  template <typename Result>
  void Start(const std::string& what,
             std::function<Result(const node::KubernetesApiOptions& options)> exchange,
             std::function<void(Result)> done) {
    auto outcome = std::make_shared<std::optional<Result>>();
    const bool queued = Queue(
        [outcome, exchange = std::move(exchange)](const node::KubernetesApiOptions& options) {
          outcome->emplace(exchange(options));
        },
        [outcome, done] { done(std::move(**outcome)); });
    if (!queued) done(Unavailable("cannot queue " + what));
  }
  // Raises the cancel flag of the exchange in flight; its outcome goes nowhere.
  void Cancel();

 private:
  struct Job;
  using Work = std::function<void(const node::KubernetesApiOptions& options)>;
  // False when libuv refused the work.
  bool Queue(Work work, std::function<void()> after);
  static void RunJob(uv_work_t* work);
  static void AfterJob(uv_work_t* work, int status);

  uv_loop_t* uv_;
  const Settings& settings_;
  Job* in_flight_ = nullptr;
};

// The wait for spec.providerID (node/provider_id_wait.h), run by RunPlugin before the state
// database, the plugin's loop and the CSI socket exist, so that the registrar cannot register the
// node under a name that would change. A libuv loop of its own with the real clock and
// SIGTERM/SIGINT; each Node read runs on libuv's worker pool, so neither the timers nor a signal
// wait for the API server, and a signal cancels a read in flight within about a second. It serves
// /metrics and /healthz meanwhile (when the plugin serves metrics), so liveness sees a plugin that
// waits, not a dead one.
enum class ProviderIdOutcome {
  kIdentified,  // identity->node_id is set
  kStopped,     // SIGTERM or SIGINT ended the wait: exit cleanly without serving
};

// Waits until `identity` (awaits_provider_id, from ResolveNodeIdentity) has a node id. An error
// (a providerID not of the form oxide://<uuid>, ...) stops the start.
StatusOr<ProviderIdOutcome> AwaitProviderId(const Settings& settings, node::NodeIdentity* identity);

}  // namespace oxide
