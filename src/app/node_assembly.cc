#include "app/node_assembly.h"

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

StatusOr<std::unique_ptr<NodeAssembly>> NodeAssembly::Create(const Settings& settings,
                                                             const node::NodeIdentity& identity,
                                                             const LoopServices& services,
                                                             rpc::CsiHandlers& handlers) {
  const int max_volumes = csi_adapter::NodeService::MaxVolumesPerNode(settings);
  std::unique_ptr<NodeAssembly> assembly(
      new NodeAssembly(settings, identity.node_id, max_volumes, services));
  // Before serving: rows left by a crash are completed or rolled back from the mounts.
  if (Status reconciled = assembly->service_.Reconcile(); !reconciled.ok()) {
    return FailedPrecondition("node state reconciliation failed: " + reconciled.message());
  }
  assembly->service_.Register(handlers);
  log::Info("node service ready", {{"node_id", identity.node_id},
                                   {"instance_id_source", identity.source},
                                   {"max_volumes_per_node", std::to_string(max_volumes)},
                                   {"sysfs_root", settings.sysfs_root}});
  if (StartupTaintTask::Wanted(settings)) {
    assembly->startup_taint_ =
        std::make_unique<StartupTaintTask>(services.loop->uv(), services.clock, settings);
  }
  return assembly;
}

NodeAssembly::NodeAssembly(const Settings& settings, const std::string& node_id, int max_volumes,
                           const LoopServices& services)
    : service_(settings, node_id, services.loop, services.clock, services.db, max_volumes,
               services.commit) {}

void NodeAssembly::Start() {
  if (startup_taint_) startup_taint_->Start();
}

void NodeAssembly::StopStartupTaint() {
  if (startup_taint_) startup_taint_->Stop();
}

void NodeAssembly::Shutdown() {
  service_.Shutdown();
}

void NodeAssembly::AddDrainSources(std::vector<OperationDrain::Source>* sources) {
  sources->emplace_back("node", &service_.operations());
}

}  // namespace oxide
