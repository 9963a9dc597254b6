#include "app/controller_assembly.h"

#include <cstdint>
#include <utility>

#include "util/log.h"

namespace oxide {

StatusOr<std::unique_ptr<ControllerAssembly>> ControllerAssembly::Create(
    const Settings& settings, const backend::ClientConfig& oxide_config,
    const LoopServices& services, rpc::CsiHandlers& handlers) {
  std::unique_ptr<ControllerAssembly> assembly(
      new ControllerAssembly(settings, oxide_config, services));
  for (const Status* loaded :
       {&assembly->volumes_.load_status(), &assembly->snapshot_rows_.load_status()}) {
    if (!loaded->ok()) return *loaded;
  }
  assembly->BuildServices(services);
  assembly->controller_->Register(handlers);
  return assembly;
}

ControllerAssembly::ControllerAssembly(const Settings& settings,
                                       const backend::ClientConfig& oxide_config,
                                       const LoopServices& services)
    : settings_(settings),
      oxide_(backend::OxideClient::Create(services.loop->uv(), services.clock, oxide_config)),
      volumes_(services.db, services.commit,
               [clock = services.clock] { return clock->WallMillis(); }),
      snapshot_rows_(services.db, services.commit),
      journal_pruner_(services.clock, services.commit),
      volume_engine_(services.clock, oxide_.get(), &volumes_, services.commit) {
  volumes_.journal().SetFinishListener([pruner = &journal_pruner_] { pruner->NoteFinished(); });
}

ControllerAssembly::~ControllerAssembly() {
  volumes_.journal().SetFinishListener(nullptr);  // the pruner goes before the journal
}

void ControllerAssembly::BuildServices(const LoopServices& services) {
  snapshot_engine_ = std::make_unique<engine::SnapshotEngine>(
      services.clock, oxide_.get(), &volumes_.journal(), &snapshot_rows_, services.commit);
  controller_ = std::make_unique<csi_adapter::ControllerService>(
      settings_, oxide_.get(), &volume_engine_, snapshot_engine_.get());
  oxide_health_ = std::make_unique<engine::OxideHealth>(services.clock, oxide_.get(),
                                                        settings_.probe_oxide_grace);
  clone_sweep_ = std::make_unique<engine::CloneSnapshotSweep>(
      services.clock, oxide_.get(), &volumes_.journal(),
      engine::CloneSweepOptions{
          .max_age = settings_.clone_snapshot_max_age,
          .period = engine::CloneSweepPeriodFor(settings_.clone_snapshot_max_age)});
  if (settings_.clone_snapshot_max_age <= engine::EngineOptions{}.operation_limit) {
    log::Warn(
        "--clone-snapshot-max-age is not above the operation limit: the sweep may delete the "
        "temporary snapshot of a clone another replica is still making",
        {{"max_age_ms", log::Num(static_cast<int64_t>(settings_.clone_snapshot_max_age.count()))},
         {"operation_limit_ms",
          log::Num(static_cast<int64_t>(engine::EngineOptions{}.operation_limit.count()))}});
  }
}

void ControllerAssembly::Start() {
  volume_engine_.RecoverUnfinished();
  snapshot_engine_->RecoverUnfinished();
  if (settings_.journal_prune) journal_pruner_.Start();
  oxide_health_->Start();
  clone_sweep_->Start();
}

void ControllerAssembly::DropCloneSweep() {
  clone_sweep_.reset();
}

void ControllerAssembly::AddDrainSources(std::vector<OperationDrain::Source>* sources) {
  sources->emplace_back("volume", &volume_engine_.operations());
  sources->emplace_back("snapshot", &snapshot_engine_->operations());
}

}  // namespace oxide
