#include "engine/node_volume_engine.h"

#include <chrono>

#include "engine/node_os_work.h"
#include "engine/node_reconciler.h"
#include "engine/node_volume_state.h"
#include "metrics/plugin_metrics.h"
#include "node/path_rules.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using store::PublicationRow;
using store::StagingRow;
using E = NodeVolumeEvent;

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

// Callers that may wait for one measurement; more are answered at once that it is stuck.
constexpr size_t kMaxMeasurementJoiners = 8;

Status DatabaseFailed(const Status& committed) {
  return Unavailable("the node's state database failed: " + committed.message());
}

}  // namespace

NodeVolumeEngine::NodeVolumeEngine(uv_loop_t* loop, node::NodeOs* os, DeviceWaiter* waiter,
                                   store::NodeVolumeStore* store, store::GroupCommit* commit,
                                   int max_concurrent_formats)
    : loop_(loop),
      os_(os),
      waiter_(waiter),
      store_(store),
      commit_(commit),
      formats_(max_concurrent_formats) {}

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

// ---- The entries of Unstage and Unpublish (the same frame around their own steps) ----

void NodeVolumeEngine::Unstage(const std::string& volume_id, const std::string& path, Done done) {
  RunRelease("NodeVolumeEngine::Unstage", "unstage", "NodeUnstageVolume", volume_id, path,
             std::move(done), &NodeVolumeEngine::UnstageAdmitted);
}

void NodeVolumeEngine::Unpublish(const std::string& volume_id, const std::string& path, Done done) {
  RunRelease("NodeVolumeEngine::Unpublish", "unpublish", "NodeUnpublishVolume", volume_id, path,
             std::move(done), &NodeVolumeEngine::UnpublishAdmitted);
}

void NodeVolumeEngine::RunRelease(const char* where, const char* operation, const char* kind,
                                  const std::string& volume_id, const std::string& path, Done done,
                                  ReleaseStep admitted) {
  affinity_.Check(where);
  done = Timed(operation, std::move(done));
  Run(volume_id, kind, path, std::move(done),
      [&](Done finish) { (this->*admitted)(volume_id, path, std::move(finish)); });
}

template <typename Row>
Status NodeVolumeEngine::Move(Row& row, NodeVolumeEvent event) {
  StatusOr<NodeRowState> next = NextNodeState(RowStateOf(row.state), event);
  if (!next.ok()) return Internal(next.status().message() + " (" + Named(row) + ")");
  row.state = *next ? NodeVolumeStateName(**next) : "";
  Record(store_, row, next->has_value());
  return Status::Ok();
}

// Both kinds of row move from the stage steps (node_volume_stage.cc) and the publish steps below.
template Status NodeVolumeEngine::Move<StagingRow>(StagingRow& row, NodeVolumeEvent event);
template Status NodeVolumeEngine::Move<PublicationRow>(PublicationRow& row, NodeVolumeEvent event);

void NodeVolumeEngine::CorrectStagedDevice(const std::string& volume_id,
                                           const node::BlockDevice& found) {
  std::optional<StagingRow> row = store_->GetStaging(volume_id);
  if (!row || SameDevice(*row, found)) return;
  log::Warn("the volume's device is not the one its row remembers: the row is corrected",
            {{"volume_id", volume_id},
             {"serial", row->serial},
             {"was", row->device_name + " " + row->device_number},
             {"now", found.name + " " + found.Number()}});
  row->device_name = found.name;
  row->device_number = found.Number();
  store_->PutStaging(*row);
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

// ---- Unpublish (its entry is beside Unstage's, above) ----

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

// ---- Health ----

void NodeVolumeEngine::Health(const std::string& volume_id, const std::string& path,
                              std::function<void(StatusOr<VolumeHealth>)> done) {
  affinity_.Check("NodeVolumeEngine::Health");
  std::optional<StagingRow> staging = store_->GetStaging(volume_id);
  std::optional<PublicationRow> publication = store_->GetPublication(path);
  const bool published = publication && publication->volume_id == volume_id &&
                         publication->state != store::kUnpublishing;
  const bool staged_here = staging && staging->staging_path == path;
  if ((!published && !staged_here) || !staging || staging->state == store::kFormatting) {
    return done(NotFound("volume " + volume_id + " is neither published nor staged at " + path));
  }
  if (Status checked = node::CheckVolumePath("volume_path", path); !checked.ok()) {
    return done(checked);
  }
  const bool expect_mount = published || !staging->block;
  const bool readonly = published && publication->readonly;
  const std::string key =
      volume_id + "\n" + path + (expect_mount ? "\nmounted" : "\n") + (readonly ? "\nro" : "\nrw");
  auto [waiting, first] = measuring_.try_emplace(key);
  if (!first && waiting->second.size() >= kMaxMeasurementJoiners) {
    // A measurement that long in flight is stuck on the device: say so, and hold no more callers.
    VolumeHealth stuck;
    stuck.problem = "a measurement of this volume has not finished and " +
                    std::to_string(waiting->second.size()) +
                    " calls wait for it: its device or filesystem may be hung";
    return done(stuck);
  }
  waiting->second.push_back(std::move(done));
  if (!first) return;  // joins the measurement under way
  RunBlocking(
      loop_,
      [os = os_, serial = staging->serial, encrypted = staging->encrypted, block = staging->block,
       path, expect_mount, readonly]() -> StatusOr<VolumeHealth> {
        return os->MeasureVolume(serial, encrypted, block, path, expect_mount, readonly);
      },
      [this, alive = alive_, key](StatusOr<VolumeHealth> health) {
        if (!*alive) return;
        auto waiters = measuring_.extract(key);
        for (auto& waiter : waiters.mapped())
          waiter(health);
      });
}

}  // namespace oxide::engine
