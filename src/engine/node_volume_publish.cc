// NodeVolumeEngine's publish and unpublish, as named steps (node_volume_engine.h). Loop thread.
#include "engine/blocking_work.h"
#include "engine/node_reconciler.h"
#include "engine/node_volume_engine.h"
#include "engine/node_volume_rows.h"
#include "metrics/plugin_metrics.h"
#include "node/path_rules.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using store::PublicationRow;
using store::StagingRow;
using E = NodeVolumeEvent;

}  // namespace

// ---- Publish ----

void NodeVolumeEngine::Publish(const PublishSpec& spec, Done done) {
  affinity_.Check("NodeVolumeEngine::Publish");
  done = Timed("publish", std::move(done));
  Run(spec.volume_id, "NodePublishVolume",
      spec.target_path + "\n" + spec.staging_path + "\n" + spec.access.key +
          (spec.readonly ? "\nro" : "\nrw"),
      std::move(done), [this, &spec](Done finish) { PublishAdmitted(spec, std::move(finish)); });
}

Status NodeVolumeEngine::PublishRefusal(const PublishSpec& spec,
                                        const std::optional<StagingRow>& staging,
                                        const std::optional<PublicationRow>& existing) const {
  const std::string& volume_id = spec.volume_id;
  const std::string& target = spec.target_path;
  if (!HasState(staging, NodeVolumeState::kStaged) || staging->staging_path != spec.staging_path) {
    return FailedPrecondition("volume " + volume_id + " is not staged at " + spec.staging_path +
                              "; call NodeStageVolume first");
  }
  if (staging->block != spec.access.block) {
    return InvalidArgument(std::string("volume ") + volume_id + " was staged as a " +
                           (staging->block ? "block" : "mount") +
                           " volume; it cannot be published as a " +
                           (spec.access.block ? "block" : "mount") + " volume");
  }
  if (existing && existing->state == store::kPublished) {
    if (existing->volume_id != volume_id) {
      return AlreadyExists("target_path " + target + " is in use by volume " + existing->volume_id);
    }
    if (existing->capability != spec.access.key || existing->readonly != spec.readonly) {
      return AlreadyExists("volume " + volume_id + " is already published at " + target +
                           " with another capability or readonly setting");
    }
  }
  if (spec.single_writer) {
    for (const PublicationRow& other : store_->PublicationsOf(volume_id)) {
      if (other.target_path != target && other.state == store::kPublished) {
        return FailedPrecondition("volume " + volume_id +
                                  " has access mode SINGLE_NODE_SINGLE_WRITER and is "
                                  "already published at " +
                                  other.target_path);
      }
    }
  }
  return Status::Ok();
}

void NodeVolumeEngine::PublishAdmitted(const PublishSpec& spec, Done finish) {
  std::optional<StagingRow> staging = store_->GetStaging(spec.volume_id);
  std::optional<PublicationRow> existing = store_->GetPublication(spec.target_path);
  if (Status refused = PublishRefusal(spec, staging, existing); !refused.ok()) {
    return finish(refused);
  }
  const StagingRow& staged = *staging;
  PublicationRow row{.target_path = spec.target_path,
                     .volume_id = spec.volume_id,
                     .state = existing ? existing->state : "",
                     .staging_path = staged.staging_path,
                     .capability = spec.access.key,
                     .readonly = spec.readonly};
  // A repeat of a done publication is checked against the device like a new one (it binds
  // nothing when the target already holds the volume's device).
  const bool repeat = existing && existing->state == store::kPublished;
  if (!repeat) {
    if (Status moved = Move(row, E::kPublishRequested); !moved.ok()) return finish(moved);
  }
  const bool block = staged.block;
  const node::MountOptions options = block ? node::MountOptions{} : spec.access.options;
  WhenDurable(finish, [=, this, serial = staged.serial, encrypted = staged.encrypted] {
    RunBlocking(
        loop_,
        [os = os_, serial, encrypted, block, staging_path = row.staging_path,
         target = row.target_path, readonly = row.readonly, options] {
          return os->PublishVolume(serial, encrypted, block, staging_path, target, readonly,
                                   options);
        },
        [this, alive = alive_, row, repeat, finish](StatusOr<node::BlockDevice> bound) mutable {
          if (*alive) Bound(std::move(row), repeat, std::move(bound), std::move(finish));
        });
  });
}

void NodeVolumeEngine::Bound(PublicationRow row, bool repeat, StatusOr<node::BlockDevice> bound,
                             Done finish) {
  if (!bound.ok()) {
    log::Warn("publishing failed",
              {{"volume_id", row.volume_id}, {"error", bound.status().message()}});
    if (repeat) return finish(bound.status());
    if (Status moved = Move(row, E::kPublishFailed); !moved.ok()) return finish(moved);
    return AnswerWhenDurable(finish, bound.status());
  }
  CorrectStagedDevice(row.volume_id, *bound);
  if (!repeat) {
    if (Status moved = Move(row, E::kPublished); !moved.ok()) return finish(moved);
    log::Info("volume published", {{"volume_id", row.volume_id},
                                   {"path", row.target_path},
                                   {"device", bound->node},
                                   {"readonly", row.readonly ? "yes" : "no"}});
  }
  AnswerWhenDurable(finish, Status::Ok());
}

// ---- Unpublish ----

void NodeVolumeEngine::Unpublish(const std::string& volume_id, const std::string& target_path,
                                 Done done) {
  affinity_.Check("NodeVolumeEngine::Unpublish");
  done = Timed("unpublish", std::move(done));
  Run(volume_id, "NodeUnpublishVolume", target_path, std::move(done),
      [&](Done finish) { UnpublishAdmitted(volume_id, target_path, std::move(finish)); });
}

void NodeVolumeEngine::UnpublishAdmitted(const std::string& volume_id, const std::string& target,
                                         Done finish) {
  std::optional<PublicationRow> row = store_->GetPublication(target);
  if (row && row->volume_id != volume_id) {
    return finish(FailedPrecondition("target_path " + target + " belongs to volume " +
                                     row->volume_id + ", not " + volume_id));
  }
  std::optional<StagingRow> staging = store_->GetStaging(volume_id);
  std::optional<node::BlockDevice> recorded;
  std::string serial;
  bool block = false;
  bool encrypted = false;
  if (staging) {
    recorded = StagedDevice(*staging);
    serial = staging->serial;
    block = staging->block;
    encrypted = staging->encrypted;
  }
  if (row) {
    if (Status moved = Move(*row, E::kUnpublishRequested); !moved.ok()) return finish(moved);
  }
  WhenDurable(finish, [=, this] {
    RunBlocking(
        loop_,
        [os = os_, serial, encrypted, recorded, block, target] {
          return os->UnmountVolumePath(serial, encrypted, recorded, block, target, false);
        },
        [this, alive = alive_, row, volume_id, finish](Status unmounted) mutable {
          if (!*alive) return;
          if (!unmounted.ok()) {
            if (row) {
              if (Status moved = Move(*row, E::kUnpublishFailed); !moved.ok()) {
                return finish(moved);
              }
            }
            return AnswerWhenDurable(finish, unmounted);
          }
          if (row) {
            const std::string target_path = row->target_path;
            if (Status moved = Move(*row, E::kUnpublished); !moved.ok()) return finish(moved);
            log::Info("volume unpublished", {{"volume_id", volume_id}, {"path", target_path}});
          }
          AnswerWhenDurable(finish, Status::Ok());
        });
  });
}

}  // namespace oxide::engine
