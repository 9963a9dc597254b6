#include "app/startup_taint_task.h"

#include <string>
#include <utility>

#include "util/log.h"

namespace oxide {

StartupTaintTask::StartupTaintTask(uv_loop_t* uv, Clock* clock, const Settings& settings)
    : settings_(settings), call_(uv, settings) {
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
  call_.Cancel();
}

void StartupTaintTask::StartPass(node::StartupTaintRemoval::StepDone done) {
  call_.Start<StatusOr<node::TaintStep>>(
      "the removal of the startup taint",
      [node_name = settings_.node_name,
       driver_name = settings_.driver_name](const node::KubernetesApiOptions& options) {
        return node::RemoveStartupTaintOnce(options, node_name, driver_name);
      },
      std::move(done));
}

}  // namespace oxide
