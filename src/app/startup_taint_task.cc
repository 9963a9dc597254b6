#include "app/startup_taint_task.h"

#include <atomic>
#include <string>
#include <utility>

#include "node/instance_identity.h"
#include "util/log.h"

namespace oxide {

// One pass on libuv's worker pool; `work.data` points here. Freed by AfterPass.
struct StartupTaintTask::Pass {
  uv_work_t work{};
  StartupTaintTask* task = nullptr;  // null once the task stopped: the result goes nowhere
  node::KubernetesApiOptions options;
  std::string node_name;
  std::string driver_name;
  std::atomic<bool> cancel{false};
  StatusOr<node::TaintStep> result = Unavailable("not run");
  node::StartupTaintRemoval::StepDone done;
};

StartupTaintTask::StartupTaintTask(uv_loop_t* uv, Clock* clock, const Settings& settings)
    : uv_(uv), settings_(settings) {
  removal_ = std::make_unique<node::StartupTaintRemoval>(
      clock,
      node::StartupTaintRemoval::Options{.node_name = settings.node_name,
                                         .driver_name = settings.driver_name},
      [this](node::StartupTaintRemoval::StepDone done) { StartPass(std::move(done)); },
      [](node::TaintStep) {});
}

StartupTaintTask::~StartupTaintTask() {
  Stop();
}

bool StartupTaintTask::Wanted(const Settings& settings) {
  if (!settings.ServesNode()) return false;
  if (!settings.remove_startup_taint) {
    log::Debug("--remove-startup-taint=false: the startup taint is left to others", {});
    return false;
  }
  if (settings.node_name.empty() || settings.kubernetes_host.empty()) {
    log::Debug("no NODE_NAME or KUBERNETES_SERVICE_HOST: no startup taint to remove", {});
    return false;
  }
  return true;
}

void StartupTaintTask::Start() {
  removal_->Start();
}

void StartupTaintTask::Stop() {
  removal_->Stop();
  if (in_flight_ != nullptr) {
    in_flight_->cancel = true;
    in_flight_->task = nullptr;
    in_flight_ = nullptr;
  }
}

void StartupTaintTask::StartPass(node::StartupTaintRemoval::StepDone done) {
  auto pass = std::make_unique<Pass>();
  pass->task = this;
  pass->options = node::KubernetesOptionsFromSettings(settings_);
  pass->options.attempts = 1;  // the removal itself tries again
  pass->options.cancel = &pass->cancel;
  pass->node_name = settings_.node_name;
  pass->driver_name = settings_.driver_name;
  pass->done = std::move(done);
  pass->work.data = pass.get();
  if (uv_queue_work(uv_, &pass->work, &StartupTaintTask::RunPass, &StartupTaintTask::AfterPass) !=
      0) {
    pass->done(Unavailable("cannot queue the removal of the startup taint"));
    return;
  }
  in_flight_ = pass.release();
}

void StartupTaintTask::RunPass(uv_work_t* work) {  // a worker thread
  auto* pass = static_cast<Pass*>(work->data);
  pass->result = node::RemoveStartupTaintOnce(pass->options, pass->node_name, pass->driver_name);
}

void StartupTaintTask::AfterPass(uv_work_t* work, int /*status*/) {
  std::unique_ptr<Pass> pass(static_cast<Pass*>(work->data));
  if (pass->task == nullptr) return;  // stopped meanwhile
  pass->task->in_flight_ = nullptr;
  pass->done(std::move(pass->result));
}

}  // namespace oxide
