// The node's exchanges with the API server around its start (node_kubernetes.h): KubernetesCall,
// then the wait for spec.providerID that uses it.
#include "app/node_kubernetes.h"

#include <atomic>
#include <csignal>

#include "app/loop_services.h"
#include "loop/clock.h"
#include "node/kubernetes_node_reader.h"
#include "node/provider_id_wait.h"
#include "util/log.h"

namespace oxide {

// One exchange; `work.data` points here. Freed by AfterJob.
struct KubernetesCall::Job {
  uv_work_t work{};
  KubernetesCall* call = nullptr;  // null once cancelled: the outcome goes nowhere
  node::KubernetesApiOptions options;
  std::atomic<bool> cancel{false};
  Work run;
  std::function<void()> after;
};

KubernetesCall::KubernetesCall(uv_loop_t* uv, const Settings& settings)
    : uv_(uv), settings_(settings) {}

KubernetesCall::~KubernetesCall() {
  Cancel();
}

bool KubernetesCall::Queue(Work work, std::function<void()> after) {
  auto job = std::make_unique<Job>();
  job->call = this;
  job->options = node::KubernetesOptionsFromSettings(settings_);
  job->options.attempts = 1;  // the caller itself tries again
  job->options.cancel = &job->cancel;
  job->run = std::move(work);
  job->after = std::move(after);
  job->work.data = job.get();
  if (uv_queue_work(uv_, &job->work, &KubernetesCall::RunJob, &KubernetesCall::AfterJob) != 0) {
    return false;
  }
  in_flight_ = job.release();
  return true;
}

void KubernetesCall::Cancel() {
  if (in_flight_ == nullptr) return;
  in_flight_->cancel = true;
  in_flight_->call = nullptr;
  in_flight_ = nullptr;
}

void KubernetesCall::RunJob(uv_work_t* work) {  // a worker thread
  auto* job = static_cast<Job*>(work->data);
  job->run(job->options);
}

void KubernetesCall::AfterJob(uv_work_t* work, int /*status*/) {
  std::unique_ptr<Job> job(static_cast<Job*>(work->data));
  if (job->call == nullptr) return;  // cancelled meanwhile
  job->call->in_flight_ = nullptr;
  job->after();
}

namespace {

// The loop, the clock, the signals and the wait; everything runs on the main thread but the
// blocking read itself.
class Phase {
 public:
  explicit Phase(const Settings& settings) : settings_(settings) {}

  StatusOr<ProviderIdOutcome> Run(node::NodeIdentity* identity) {
    uv_loop_init(&uv_);
    {
      LoopClock clock(&uv_);
      node::ProviderIdWait wait(
          &clock,
          {.node_name = settings_.node_name,
           .wait_for_provider_id = settings_.wait_for_provider_id},
          [this](node::ProviderIdWait::ReadDone done) { StartRead(std::move(done)); },
          [this](StatusOr<std::string> id) {
            id_ = std::move(id);
            CloseSignals();
          });
      wait_ = &wait;
      for (uv_signal_t* handle : {&term_, &interrupt_}) {
        uv_signal_init(&uv_, handle);
        handle->data = this;
      }
      uv_signal_start(&term_, &Phase::OnSignal, SIGTERM);
      uv_signal_start(&interrupt_, &Phase::OnSignal, SIGINT);
      // /healthz answers while the plugin waits (its loop turns): liveness must not restart a
      // plugin that is only waiting for the cloud controller manager.
      std::optional<MetricsEndpoint> endpoint;
      if (settings_.serve_metrics) {
        endpoint.emplace(&uv_, MetricsOptionsFromSettings(settings_, nullptr));
        if (Status started = endpoint->Start(); !started.ok()) {
          log::Warn("cannot serve /healthz while waiting for spec.providerID",
                    {{"error", started.message()}});
          endpoint.reset();
        } else {
          log::Info("serving metrics", {{"address", endpoint->MetricsUrl()}});
        }
        endpoint_ = endpoint ? &*endpoint : nullptr;
      }
      wait.Start(identity->node);
      // Until the wait ends (the signals are closed) and no read is in flight.
      uv_run(&uv_, UV_RUN_DEFAULT);
      wait_ = nullptr;
    }
    uv_run(&uv_, UV_RUN_DEFAULT);  // the clock's close callback
    uv_loop_close(&uv_);
    if (stopped_) return ProviderIdOutcome::kStopped;
    if (!id_ || !id_->ok()) {
      return FailedPrecondition("no Oxide instance id: kubernetes: " +
                                (id_ ? id_->status().message() : std::string("no answer")));
    }
    identity->node_id = **id_;
    identity->awaits_provider_id = false;
    return ProviderIdOutcome::kIdentified;
  }

 private:
  void StartRead(node::ProviderIdWait::ReadDone done) {
    read_.Start<StatusOr<node::KubernetesNode>>(
        "the read of the Node",
        [node_name = settings_.node_name](const node::KubernetesApiOptions& options) {
          return node::ReadKubernetesNode(options, node_name);
        },
        std::move(done));
  }

  static void OnSignal(uv_signal_t* handle, int signum) {
    auto* self = static_cast<Phase*>(handle->data);
    log::Info("signal received while waiting for spec.providerID: exiting without serving",
              {{"signal", signum == SIGTERM ? "SIGTERM" : "SIGINT"}});
    self->stopped_ = true;
    if (self->wait_ != nullptr) self->wait_->Stop();
    self->read_.Cancel();
    self->CloseSignals();
  }

  void CloseSignals() {
    // The plugin's own endpoint takes the port over once the wait is over.
    if (endpoint_ != nullptr) endpoint_->Stop();
    endpoint_ = nullptr;
    if (signals_closed_) return;
    signals_closed_ = true;
    for (uv_signal_t* handle : {&term_, &interrupt_}) {
      uv_close(reinterpret_cast<uv_handle_t*>(handle), nullptr);
    }
  }

  const Settings& settings_;
  uv_loop_t uv_{};
  uv_signal_t term_{};
  uv_signal_t interrupt_{};
  bool signals_closed_ = false;
  node::ProviderIdWait* wait_ = nullptr;
  MetricsEndpoint* endpoint_ = nullptr;
  KubernetesCall read_{&uv_, settings_};  // the read in flight
  bool stopped_ = false;
  std::optional<StatusOr<std::string>> id_;
};

}  // namespace

StatusOr<ProviderIdOutcome> AwaitProviderId(const Settings& settings,
                                            node::NodeIdentity* identity) {
  Phase phase(settings);
  return phase.Run(identity);
}

}  // namespace oxide
