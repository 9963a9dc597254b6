#include "engine/node_volume_engine.h"

#include <chrono>

#include "engine/blocking_work.h"
#include "engine/node_reconciler.h"
#include "metrics/plugin_metrics.h"
#include "node/path_rules.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using store::PublicationRow;
using store::StagingRow;
using E = NodeVolumeEvent;

NodeRowState StateOf(const std::string& name) {
  return name.empty() ? std::nullopt : NodeVolumeStateFromName(name);
}

bool HasState(const std::optional<StagingRow>& row, NodeVolumeState state) {
  return row && StateOf(row->state) == state;
}

// What Move() needs of each kind of row: how an error names it, and how it is written (`keep`)
// or deleted.
std::string Named(const StagingRow& row) {
  return "volume " + row.volume_id;
}

std::string Named(const PublicationRow& row) {
  return "target " + row.target_path;
}

void Record(store::NodeVolumeStore* store, const StagingRow& row, bool keep) {
  if (keep) {
    store->PutStaging(row);
  } else {
    store->DeleteStaging(row.volume_id);
  }
}

void Record(store::NodeVolumeStore* store, const PublicationRow& row, bool keep) {
  if (keep) {
    store->PutPublication(row);
  } else {
    store->DeletePublication(row.target_path);
  }
}

Status DatabaseFailed(const Status& committed) {
  return Unavailable("the node's state database failed: " + committed.message());
}

}  // namespace

NodeVolumeEngine::NodeVolumeEngine(uv_loop_t* loop, node::NodeOs* os, DeviceWaiter* waiter,
                                   store::NodeVolumeStore* store, store::GroupCommit* commit)
    : loop_(loop), os_(os), waiter_(waiter), store_(store), commit_(commit) {}

NodeVolumeEngine::~NodeVolumeEngine() {
  *alive_ = false;
}

void NodeVolumeEngine::Run(const std::string& volume_id, const std::string& kind,
                           const std::string& fingerprint, Done done,
                           const std::function<void(Done)>& start) {
  switch (tracker_.Admit(volume_id, kind, fingerprint, std::move(done))) {
    case Tracker::Admission::kStart:
      break;
    case Tracker::Admission::kJoined:
      log::Info("call joined the identical operation in flight",
                {{"volume_id", volume_id}, {"operation", kind}});
      return;
    case Tracker::Admission::kRejected:
      return;
  }
  start([this, volume_id](const Status& outcome) { tracker_.Finish(volume_id, outcome); });
}

template <typename Row>
Status NodeVolumeEngine::Move(Row& row, NodeVolumeEvent event) {
  StatusOr<NodeRowState> next = NextNodeState(StateOf(row.state), event);
  if (!next.ok()) return Internal(next.status().message() + " (" + Named(row) + ")");
  row.state = *next ? NodeVolumeStateName(**next) : "";
  Record(store_, row, next->has_value());
  return Status::Ok();
}

void NodeVolumeEngine::WhenDurable(Done finish, std::function<void()> next) {
  commit_->WhenDurable(
      [alive = alive_, finish = std::move(finish), next = std::move(next)](Status committed) {
        if (!*alive) return;
        if (committed.ok()) return next();
        finish(DatabaseFailed(committed));
      });
}

void NodeVolumeEngine::AnswerWhenDurable(Done finish, Status outcome) {
  commit_->WhenDurable(
      [alive = alive_, finish = std::move(finish), outcome = std::move(outcome)](Status committed) {
        if (!*alive) return;
        if (!outcome.ok()) return finish(outcome);
        finish(committed.ok() ? Status::Ok() : DatabaseFailed(committed));
      });
}

NodeVolumeEngine::Done NodeVolumeEngine::Timed(const char* operation, Done done) {
  // A latency measurement for the metrics: real time, not the injected clock.
  return [operation, started = std::chrono::steady_clock::now(),
          done = std::move(done)](const Status& status) {
    metrics::Families()
        .node_operation_duration.With({operation, StatusCodeName(status.code())})
        .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    done(status);
  };
}

// ---- Stage ----

void NodeVolumeEngine::Stage(const StageSpec& spec, Done done) {
  affinity_.Check("NodeVolumeEngine::Stage");
  done = Timed("stage", std::move(done));
  Run(spec.volume_id, "NodeStageVolume",
      spec.staging_path + "\n" + spec.access.key + "\n" + spec.serial, std::move(done),
      [this, &spec](Done finish) { StageAdmitted(spec, std::move(finish)); });
}

void NodeVolumeEngine::StageAdmitted(const StageSpec& spec, Done finish) {
  const std::string& volume_id = spec.volume_id;
  const NodeAccess& access = spec.access;
  std::optional<StagingRow> existing = store_->GetStaging(volume_id);
  if (HasState(existing, NodeVolumeState::kStaged)) {
    if (existing->staging_path != spec.staging_path) {
      return finish(AlreadyExists("volume " + volume_id + " is already staged at " +
                                  existing->staging_path + ", not at " + spec.staging_path));
    }
    if (existing->capability != access.key) {
      return finish(AlreadyExists("volume " + volume_id + " is already staged at " +
                                  existing->staging_path + " with another volume capability (" +
                                  existing->capability + ")"));
    }
    return finish(Status::Ok());
  }
  // A format of ours that a crash interrupted, on this volume's device: it is done again.
  const bool format_intent = HasState(existing, NodeVolumeState::kFormatting) &&
                             existing->serial == spec.serial &&
                             existing->fs_type == access.fs_type && !access.block;
  StagingRow row{.volume_id = volume_id,
                 .staging_path = spec.staging_path,
                 .state = existing ? existing->state : "",
                 .capability = access.key,
                 .block = access.block,
                 .fs_type = access.fs_type,
                 .serial = spec.serial,
                 .device_name = "",
                 .device_number = ""};
  // Durable with the device found below, before anything is formatted or mounted.
  if (Status moved = Move(row, format_intent ? E::kFormatResumed : E::kStageRequested);
      !moved.ok()) {
    return finish(moved);
  }
  log::Info("staging volume", {{"volume_id", volume_id},
                               {"serial", row.serial},
                               {"path", row.staging_path},
                               {"access", row.block ? "block" : "mount " + row.fs_type}});
  waiter_->Wait(spec.serial,
                [this, alive = alive_, row, options = access.options,
                 finish = std::move(finish)](StatusOr<node::BlockDevice> device) mutable {
                  if (*alive)
                    StageWithDevice(std::move(row), std::move(options), std::move(device), finish);
                });
}

void NodeVolumeEngine::StageWithDevice(StagingRow row, node::MountOptions options,
                                       StatusOr<node::BlockDevice> device, Done finish) {
  if (!device.ok()) return FailStaging(std::move(row), device.status(), finish);
  // Never stage one device for two volumes.
  for (const StagingRow& other : store_->ListStagings()) {
    if (other.volume_id != row.volume_id && other.state != store::kStale &&
        other.state != store::kFormatting && other.device_number == device->Number()) {
      return FailStaging(std::move(row),
                         FailedPrecondition("device " + device->node + " (serial " + row.serial +
                                            ") is already staged for volume " + other.volume_id),
                         finish);
    }
  }
  row.device_name = device->name;
  row.device_number = device->Number();
  if (row.block) {  // nothing to mount: the device is remembered in the row
    if (Status moved = Move(row, E::kStaged); !moved.ok()) return finish(moved);
    log::Info("volume staged", {{"volume_id", row.volume_id}, {"device", device->node}});
    return AnswerWhenDurable(finish, Status::Ok());
  }
  store_->PutStaging(row);  // the device, recorded before it is touched
  node::BlockDevice found = *device;
  WhenDurable(finish, [this, row, found, options, finish] {
    const bool intent = row.state == store::kFormatting;
    RunBlocking(
        loop_,
        [os = os_, found, path = row.staging_path, fs_type = row.fs_type, intent] {
          return os->PlanStaging(found, path, fs_type, intent);
        },
        [this, alive = alive_, row, found, options,
         finish](StatusOr<node::StagePlan> plan) mutable {
          if (!*alive) return;
          if (!plan.ok()) return FailStaging(std::move(row), plan.status(), finish);
          if (*plan != node::StagePlan::kFormat) {
            return MountStaged(std::move(row), found, options, false, finish);
          }
          if (row.state == store::kFormatting) {
            log::Warn("formatting the volume again: an earlier format of it was interrupted",
                      {{"volume_id", row.volume_id}, {"device", found.node}});
            return MountStaged(std::move(row), found, options, true, finish);
          }
          // Durable before mkfs touches the device: after a crash the retry knows the device
          // was blank and only our mkfs wrote to it.
          if (Status moved = Move(row, E::kFormatIntended); !moved.ok()) return finish(moved);
          WhenDurable(finish, [this, row, found, options, finish] {
            log::Info(
                "formatting volume",
                {{"volume_id", row.volume_id}, {"device", found.node}, {"fs_type", row.fs_type}});
            MountStaged(row, found, options, true, finish);
          });
        });
  });
}

void NodeVolumeEngine::MountStaged(StagingRow row, const node::BlockDevice& found,
                                   const node::MountOptions& options, bool format, Done finish) {
  const bool redo = format && row.state == store::kFormatting;
  RunBlocking(
      loop_,
      [os = os_, found, path = row.staging_path, fs_type = row.fs_type, options, format, redo] {
        return os->FormatAndMount(found, path, fs_type, options, format, redo);
      },
      [this, alive = alive_, row, found, format, finish](Status mounted) mutable {
        if (!*alive) return;
        if (!mounted.ok()) return FailStaging(std::move(row), mounted, finish);
        if (Status moved = Move(row, E::kStaged); !moved.ok()) return finish(moved);
        log::Info("volume staged", {{"volume_id", row.volume_id},
                                    {"device", found.node},
                                    {"path", row.staging_path},
                                    {"formatted", format ? "yes" : "no"}});
        AnswerWhenDurable(finish, Status::Ok());
      });
}

void NodeVolumeEngine::FailStaging(StagingRow row, const Status& status, Done finish) {
  // Nothing was mounted: the row goes and the retry starts over, unless it holds a format
  // intent, which stays for the retry.
  if (Status moved = Move(row, E::kStageFailed); !moved.ok()) return finish(moved);
  log::Warn("staging failed", {{"volume_id", row.volume_id}, {"error", status.message()}});
  AnswerWhenDurable(finish, status);
}

// ---- Unstage ----

void NodeVolumeEngine::Unstage(const std::string& volume_id, const std::string& staging_path,
                               Done done) {
  affinity_.Check("NodeVolumeEngine::Unstage");
  done = Timed("unstage", std::move(done));
  Run(volume_id, "NodeUnstageVolume", staging_path, std::move(done),
      [&](Done finish) { UnstageAdmitted(volume_id, staging_path, std::move(finish)); });
}

void NodeVolumeEngine::UnstageAdmitted(const std::string& volume_id, const std::string& path,
                                       Done finish) {
  std::vector<PublicationRow> publications = store_->PublicationsOf(volume_id);
  for (const PublicationRow& publication : publications) {
    if (publication.state != store::kStale) {
      return finish(FailedPrecondition("volume " + volume_id + " is still published at " +
                                       publication.target_path +
                                       "; call NodeUnpublishVolume first"));
    }
  }
  std::optional<StagingRow> row = store_->GetStaging(volume_id);
  // A format intent is not a staging: it stays (its device is never mounted while it does), so
  // that a later stage of this volume can still finish the interrupted format.
  if (row && (row->staging_path != path || row->state == store::kFormatting)) row.reset();
  std::optional<node::BlockDevice> device;
  if (row) {
    device = StagedDevice(*row);
    if (Status moved = Move(*row, E::kUnstageRequested); !moved.ok()) return finish(moved);
  }
  const bool block = row && row->block;
  WhenDurable(finish, [=, this] {
    RunBlocking(
        loop_,
        [os = os_, device, block, path] {
          return os->UnmountAndRemove(device ? &*device : nullptr, block, path, true);
        },
        [this, alive = alive_, row, volume_id, publications, finish](Status unmounted) mutable {
          if (!*alive) return;
          if (!unmounted.ok()) {
            if (row) {
              if (Status moved = Move(*row, E::kUnstageFailed); !moved.ok()) return finish(moved);
            }
            return AnswerWhenDurable(finish, unmounted);
          }
          if (row) {
            for (PublicationRow stale : publications) {
              if (Status moved = Move(stale, E::kUnstaged); !moved.ok()) return finish(moved);
            }
            const std::string staging_path = row->staging_path;
            if (Status moved = Move(*row, E::kUnstaged); !moved.ok()) return finish(moved);
            log::Info("volume unstaged", {{"volume_id", volume_id}, {"path", staging_path}});
          }
          AnswerWhenDurable(finish, Status::Ok());
        });
  });
}

// ---- Publish ----

void NodeVolumeEngine::Publish(const PublishSpec& spec, Done done) {
  affinity_.Check("NodeVolumeEngine::Publish");
  done = Timed("publish", std::move(done));
  Run(spec.volume_id, "NodePublishVolume",
      spec.target_path + "\n" + spec.staging_path + "\n" + spec.access.key +
          (spec.readonly ? "\nro" : "\nrw"),
      std::move(done), [this, &spec](Done finish) { PublishAdmitted(spec, std::move(finish)); });
}

void NodeVolumeEngine::PublishAdmitted(const PublishSpec& spec, Done finish) {
  const std::string& volume_id = spec.volume_id;
  const std::string& target = spec.target_path;
  std::optional<StagingRow> staging = store_->GetStaging(volume_id);
  if (!HasState(staging, NodeVolumeState::kStaged) || staging->staging_path != spec.staging_path) {
    return finish(FailedPrecondition("volume " + volume_id + " is not staged at " +
                                     spec.staging_path + "; call NodeStageVolume first"));
  }
  const StagingRow& staged = *staging;
  if (staged.block != spec.access.block) {
    return finish(InvalidArgument(std::string("volume ") + volume_id + " was staged as a " +
                                  (staged.block ? "block" : "mount") +
                                  " volume; it cannot be published as a " +
                                  (spec.access.block ? "block" : "mount") + " volume"));
  }
  std::optional<PublicationRow> existing = store_->GetPublication(target);
  if (existing && existing->state == store::kPublished) {
    if (existing->volume_id != volume_id) {
      return finish(
          AlreadyExists("target_path " + target + " is in use by volume " + existing->volume_id));
    }
    if (existing->capability != spec.access.key || existing->readonly != spec.readonly) {
      return finish(AlreadyExists("volume " + volume_id + " is already published at " + target +
                                  " with another capability or readonly setting"));
    }
    return finish(Status::Ok());
  }
  if (spec.single_writer) {
    for (const PublicationRow& other : store_->PublicationsOf(volume_id)) {
      if (other.target_path != target && other.state == store::kPublished) {
        return finish(FailedPrecondition("volume " + volume_id +
                                         " has access mode SINGLE_NODE_SINGLE_WRITER and is "
                                         "already published at " +
                                         other.target_path));
      }
    }
  }
  std::optional<node::BlockDevice> device = StagedDevice(staged);
  if (!device) {
    return finish(Internal("volume " + volume_id + " is staged without a known device"));
  }
  PublicationRow row{.target_path = target,
                     .volume_id = volume_id,
                     .state = existing ? existing->state : "",
                     .staging_path = staged.staging_path,
                     .capability = spec.access.key,
                     .readonly = spec.readonly};
  if (Status moved = Move(row, E::kPublishRequested); !moved.ok()) return finish(moved);
  const bool block = staged.block;
  const std::string source = block ? device->node : staged.staging_path;
  const node::MountOptions options = block ? node::MountOptions{} : spec.access.options;
  WhenDurable(finish, [=, this, device = *device] {
    RunBlocking(
        loop_,
        [os = os_, device, block, source, target, readonly = row.readonly, options] {
          return os->PublishBind(device, block, source, target, readonly, options);
        },
        [this, alive = alive_, row, finish](Status bound) mutable {
          if (!*alive) return;
          if (!bound.ok()) {
            if (Status moved = Move(row, E::kPublishFailed); !moved.ok()) return finish(moved);
            log::Warn("publishing failed",
                      {{"volume_id", row.volume_id}, {"error", bound.message()}});
            return AnswerWhenDurable(finish, bound);
          }
          if (Status moved = Move(row, E::kPublished); !moved.ok()) return finish(moved);
          log::Info("volume published", {{"volume_id", row.volume_id},
                                         {"path", row.target_path},
                                         {"readonly", row.readonly ? "yes" : "no"}});
          AnswerWhenDurable(finish, Status::Ok());
        });
  });
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
  std::optional<node::BlockDevice> device;
  bool block = false;
  if (staging) {
    device = StagedDevice(*staging);
    block = staging->block;
  }
  if (row) {
    if (Status moved = Move(*row, E::kUnpublishRequested); !moved.ok()) return finish(moved);
  }
  WhenDurable(finish, [=, this] {
    RunBlocking(
        loop_,
        [os = os_, device, block, target] {
          return os->UnmountAndRemove(device ? &*device : nullptr, block, target, true);
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

// ---- Health ----

void NodeVolumeEngine::Health(const std::string& volume_id, const std::string& path,
                              std::function<void(StatusOr<VolumeHealth>)> done) {
  affinity_.Check("NodeVolumeEngine::Health");
  std::optional<StagingRow> staging = store_->GetStaging(volume_id);
  std::optional<PublicationRow> publication = store_->GetPublication(path);
  const bool published = publication && publication->volume_id == volume_id &&
                         publication->state != store::kUnpublishing;
  const bool staged_here = staging && staging->staging_path == path;
  std::optional<node::BlockDevice> device = staging ? StagedDevice(*staging) : std::nullopt;
  if ((!published && !staged_here) || !device) {
    return done(NotFound("volume " + volume_id + " is neither published nor staged at " + path));
  }
  if (Status checked = node::CheckVolumePath("volume_path", path); !checked.ok()) {
    return done(checked);
  }
  const bool block = staging->block;
  const bool expect_mount = published || !block;
  const bool readonly = published && publication->readonly;
  RunBlocking(
      loop_,
      [os = os_, device = *device, block, path, expect_mount,
       readonly]() -> StatusOr<VolumeHealth> {
        VolumeHealth health;
        health.problem = os->VolumeProblem(device, block, path, expect_mount, readonly);
        if (block) {
          StatusOr<int64_t> bytes = os->BlockDeviceBytes(device.node);
          if (bytes.ok()) health.block_bytes = *bytes;
        } else if (health.problem.empty() ||
                   health.problem.find("read-only") != std::string::npos) {
          StatusOr<node::FilesystemUsage> usage = os->UsageOf(path);
          if (usage.ok()) health.usage = *usage;
        }
        return health;
      },
      std::move(done));
}

}  // namespace oxide::engine
