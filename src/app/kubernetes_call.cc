#include "app/kubernetes_call.h"

#include <atomic>

#include "node/instance_identity.h"

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

}  // namespace oxide
