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

bool SameDevice(const StagingRow& row, const node::BlockDevice& device) {
  return row.device_name == device.name && row.device_number == device.Number();
}

bool Formats(const node::StagePlan& plan) {
  return plan.action == node::StageAction::kFormat || plan.action == node::StageAction::kReformat;
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

template <typename Row>
Status NodeVolumeEngine::Move(Row& row, NodeVolumeEvent event) {
  StatusOr<NodeRowState> next = NextNodeState(StateOf(row.state), event);
  if (!next.ok()) return Internal(next.status().message() + " (" + Named(row) + ")");
  row.state = *next ? NodeVolumeStateName(**next) : "";
  Record(store_, row, next->has_value());
  return Status::Ok();
}

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

// ---- Stage ----

void NodeVolumeEngine::Stage(const StageSpec& spec, Done done) {
  affinity_.Check("NodeVolumeEngine::Stage");
  done = Timed("stage", std::move(done));
  Run(spec.volume_id, "NodeStageVolume",
      spec.staging_path + "\n" + spec.access.key + "\n" + spec.serial + "\n" +
          node::DescribeFilesystemOptions(spec.fs_options) + (spec.encrypted ? "\nencrypted" : ""),
      std::move(done), [this, &spec](Done finish) { StageAdmitted(spec, std::move(finish)); });
}

void NodeVolumeEngine::StageAdmitted(const StageSpec& spec, Done finish) {
  const std::string& volume_id = spec.volume_id;
  std::optional<StagingRow> existing = store_->GetStaging(volume_id);
  if (HasState(existing, NodeVolumeState::kStaged)) {
    if (existing->staging_path != spec.staging_path) {
      return finish(AlreadyExists("volume " + volume_id + " is already staged at " +
                                  existing->staging_path + ", not at " + spec.staging_path));
    }
    if (existing->capability != spec.access.key) {
      return finish(AlreadyExists("volume " + volume_id + " is already staged at " +
                                  existing->staging_path + " with another volume capability (" +
                                  existing->capability + ")"));
    }
    if (existing->encrypted != spec.encrypted) {
      return finish(AlreadyExists(
          "volume " + volume_id + " is already staged at " + existing->staging_path + " as " +
          (existing->encrypted ? "an encrypted" : "a plain") + " volume; this call asks for " +
          (spec.encrypted ? "an encrypted" : "a plain") + " one"));
    }
    if (existing->serial != spec.serial) {
      return finish(FailedPrecondition("volume " + volume_id +
                                       " is staged from the disk with NVMe "
                                       "serial " +
                                       existing->serial + ", but this call names " + spec.serial +
                                       "; unstage it first"));
    }
    return VerifyStagedRow(*existing, spec, std::move(finish));
  }
  BeginStaging(existing, spec, std::move(finish));
}

void NodeVolumeEngine::VerifyStagedRow(StagingRow row, const StageSpec& spec, Done finish) {
  RunBlocking(
      loop_,
      [os = os_, serial = row.serial, encrypted = row.encrypted, block = row.block,
       path = row.staging_path] { return os->VerifyStaged(serial, encrypted, block, path); },
      [this, alive = alive_, row, spec, finish](StatusOr<node::BlockDevice> device) mutable {
        if (!*alive) return;
        if (device.ok()) {
          if (SameDevice(row, *device)) return finish(Status::Ok());
          CorrectStagedDevice(row.volume_id, *device);
          return AnswerWhenDurable(finish, Status::Ok());
        }
        log::Warn("the volume's staging row does not match its device: staging it again",
                  {{"volume_id", row.volume_id}, {"error", device.status().message()}});
        if (Status moved = Move(row, E::kMountVanished); !moved.ok()) return finish(moved);
        BeginStaging(row, spec, finish);
      });
}

void NodeVolumeEngine::BeginStaging(const std::optional<StagingRow>& existing,
                                    const StageSpec& spec, Done finish) {
  const NodeAccess& access = spec.access;
  // A format of ours that a crash interrupted, on this volume's device: the plan decides from
  // the device whether it is done again.
  const bool format_intent = HasState(existing, NodeVolumeState::kFormatting) &&
                             existing->serial == spec.serial &&
                             existing->fs_type == access.fs_type && !access.block;
  StagingRow row{.volume_id = spec.volume_id,
                 .staging_path = spec.staging_path,
                 .state = existing ? existing->state : "",
                 .capability = access.key,
                 .block = access.block,
                 .fs_type = access.fs_type,
                 .serial = spec.serial,
                 .device_name = "",
                 .device_number = "",
                 .format_uuid = format_intent ? existing->format_uuid : "",
                 .encrypted = spec.encrypted};
  if (HasState(existing, NodeVolumeState::kStale)) {
    // The device it last had stays recorded until the stage succeeds: it is what unpublish and
    // unstage recognise a leftover mount by if this stage fails.
    row.device_name = existing->device_name;
    row.device_number = existing->device_number;
    restaging_.insert(row.volume_id);
  }
  // Durable with the device found below, before anything is formatted or mounted.
  if (Status moved = Move(row, format_intent ? E::kFormatResumed : E::kStageRequested);
      !moved.ok()) {
    return finish(moved);
  }
  log::Info("staging volume", {{"volume_id", row.volume_id},
                               {"serial", row.serial},
                               {"path", row.staging_path},
                               {"access", row.block ? "block" : "mount " + row.fs_type},
                               {"encrypted", spec.encrypted ? "yes" : "no"}});
  node::StageInputs inputs{.serial = spec.serial,
                           .staging_path = spec.staging_path,
                           .fs_type = access.fs_type,
                           .options = access.options,
                           .intent_uuid = row.format_uuid,
                           .expected_bytes = spec.disk_bytes,
                           .encrypted = spec.encrypted,
                           .passphrase = spec.passphrase,
                           .fs_options = spec.fs_options};
  waiter_->Wait(spec.serial,
                [this, alive = alive_, row, inputs = std::move(inputs),
                 finish = std::move(finish)](StatusOr<node::BlockDevice> device) mutable {
                  if (*alive)
                    StageWithDevice(std::move(row), std::move(inputs), std::move(device), finish);
                });
}

void NodeVolumeEngine::StageWithDevice(StagingRow row, node::StageInputs inputs,
                                       StatusOr<node::BlockDevice> device, Done finish) {
  if (!device.ok()) return FailStaging(std::move(row), device.status(), finish);
  // Never stage one disk for two volumes.
  for (const StagingRow& other : store_->ListStagings()) {
    // A format intent claims its disk too.
    if (other.volume_id != row.volume_id && other.state != store::kStale &&
        other.serial == row.serial) {
      return FailStaging(std::move(row),
                         FailedPrecondition("device " + device->node + " (serial " + row.serial +
                                            ") is already staged for volume " + other.volume_id),
                         finish);
    }
  }
  if (row.device_name.empty()) {  // a stale row keeps its last device until staged again
    row.device_name = device->name;
    row.device_number = device->Number();
  }
  node::BlockDevice found = *device;
  if (row.block && !inputs.encrypted) return MarkStaged(std::move(row), found, "block", finish);
  store_->PutStaging(row);  // the intent, durable before the device is touched
  if (row.block) return OpenEncryptedBlock(std::move(row), found, std::move(inputs), finish);
  WhenDurable(finish, [this, row, found, inputs, finish] {
    RunBlocking(
        loop_, [os = os_, found, inputs] { return os->PlanStaging(found, inputs); },
        [this, alive = alive_, row, found, inputs, finish](StatusOr<node::StagePlan> plan) {
          if (!*alive) return;
          if (!plan.ok()) return CloseMappingAndFail(row, plan.status(), finish);
          StageByPlan(row, found, inputs, *plan, finish);
        });
  });
}

void NodeVolumeEngine::OpenEncryptedBlock(StagingRow row, const node::BlockDevice& found,
                                          node::StageInputs inputs, Done finish) {
  WhenDurable(finish, [this, row, found, inputs, finish] {
    RunBlocking(
        loop_, [os = os_, found, inputs] { return os->OpenEncryptedBlock(found, inputs); },
        [this, alive = alive_, row, finish](StatusOr<node::BlockDevice> mapping) {
          if (!*alive) return;
          if (!mapping.ok()) return CloseMappingAndFail(row, mapping.status(), finish);
          MarkStaged(row, *mapping, "encrypted block", finish);
        });
  });
}

void NodeVolumeEngine::StageByPlan(StagingRow row, const node::BlockDevice& found,
                                   node::StageInputs inputs, node::StagePlan plan, Done finish) {
  log::Info("staging plan", {{"volume_id", row.volume_id},
                             {"device", found.node},
                             {"plan", Formats(plan) ? "format" : "mount"},
                             {"because", plan.reason}});
  if (plan.action == node::StageAction::kAlreadyMounted) {
    return MarkStaged(std::move(row), plan.volume_device.value_or(found), "already mounted",
                      finish);
  }
  if (!Formats(plan)) {
    if (!inputs.fs_options.empty()) {
      log::Info(
          "filesystem options not applied: the device already holds a filesystem, which is "
          "mounted as it is",
          {{"volume_id", row.volume_id},
           {"device", found.node},
           {"options", node::DescribeFilesystemOptions(inputs.fs_options)}});
    }
    return CarryOutPlan(std::move(row), found, inputs, plan, finish);
  }
  const bool again = row.state == store::kFormatting;
  if (again) {
    log::Warn("formatting the volume again: an earlier format of it was interrupted",
              {{"volume_id", row.volume_id}, {"device", found.node}, {"because", plan.reason}});
  }
  // Durable before mkfs touches the device: after a crash the retry knows the device was blank,
  // and which UUID our mkfs writes (an intent from before UUIDs were recorded gets one now).
  const bool record = !again || row.format_uuid != plan.uuid;
  row.format_uuid = plan.uuid;
  if (!again) {
    if (Status moved = Move(row, E::kFormatIntended); !moved.ok()) return finish(moved);
  } else if (record) {
    store_->PutStaging(row);
  }
  WhenDurable(finish, [this, row, found, inputs, plan, finish, again] {
    if (!again) {
      log::Info("formatting volume",
                {{"volume_id", row.volume_id},
                 {"device", found.node},
                 {"fs_type", row.fs_type},
                 {"uuid", plan.uuid},
                 {"fs_options", node::DescribeFilesystemOptions(inputs.fs_options)}});
    }
    CarryOutPlan(row, found, inputs, plan, finish);
  });
}

void NodeVolumeEngine::CarryOutPlan(StagingRow row, const node::BlockDevice& found,
                                    const node::StageInputs& inputs, const node::StagePlan& plan,
                                    Done finish) {
  auto carry_out = [this, row, found, inputs, plan, finish] {
    const bool format = Formats(plan);
    RunBlocking(
        loop_, [os = os_, found, plan, inputs] { return os->CarryOutStaging(found, plan, inputs); },
        [this, alive = alive_, row, format, finish](StatusOr<node::BlockDevice> mounted) mutable {
          if (!*alive) return;
          if (format) formats_.Leave();
          if (!mounted.ok()) return CloseMappingAndFail(std::move(row), mounted.status(), finish);
          MarkStaged(std::move(row), *mounted, format ? "formatted" : "mounted", finish);
        });
  };
  if (!Formats(plan)) return carry_out();
  if (formats_.full()) {
    log::Info("the format waits for a free format slot (--max-concurrent-formats)",
              {{"volume_id", row.volume_id}, {"running", std::to_string(formats_.running())}});
  }
  formats_.Enter(std::move(carry_out));
}

void NodeVolumeEngine::MarkStaged(StagingRow row, const node::BlockDevice& found, const char* how,
                                  Done finish) {
  restaging_.erase(row.volume_id);
  row.format_uuid.clear();  // the intent ends with the staging
  row.device_name = found.name;
  row.device_number = found.Number();
  if (Status moved = Move(row, E::kStaged); !moved.ok()) return finish(moved);
  log::Info("volume staged", {{"volume_id", row.volume_id},
                              {"device", found.node},
                              {"path", row.staging_path},
                              {"how", how}});
  AnswerWhenDurable(finish, Status::Ok());
}

void NodeVolumeEngine::CloseMappingAndFail(StagingRow row, const Status& status, Done finish) {
  if (!row.encrypted) return FailStaging(std::move(row), status, finish);
  // The stage may have opened the volume's mapping before it failed: nothing is left open that
  // nothing uses (a mapping in use stays, and says so in the log).
  RunBlocking(
      loop_, [os = os_, serial = row.serial] { return os->CloseVolumeMapping(serial); },
      [this, alive = alive_, row, status, finish](Status closed) {
        if (!*alive) return;
        if (!closed.ok()) {
          log::Warn("the encrypted mapping of a failed stage was left open",
                    {{"volume_id", row.volume_id}, {"error", closed.message()}});
        }
        FailStaging(row, status, finish);
      });
}

void NodeVolumeEngine::FailStaging(StagingRow row, const Status& status, Done finish) {
  // Nothing was mounted: the row goes and the retry starts over, unless it holds a format
  // intent, which stays for the retry (the device decides, at the retry, what it is worth), or
  // the stage began from a stale row, which stays stale with its last device.
  const bool was_stale = restaging_.erase(row.volume_id) > 0;
  const E event = was_stale && row.state == store::kStaging ? E::kRestageFailed : E::kStageFailed;
  if (Status moved = Move(row, event); !moved.ok()) return finish(moved);
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
  std::optional<node::BlockDevice> recorded;
  std::string serial;
  bool encrypted = false;
  if (HasState(row, NodeVolumeState::kFormatting)) {
    // Asked to unstage: the CO has given up this stage, and the volume may be used elsewhere
    // before it comes back. The intent goes; a later stage trusts only the device. An encrypted
    // volume's mapping, which the interrupted stage may have opened, is closed.
    if (row->encrypted && row->staging_path == path) {
      serial = row->serial;
      encrypted = true;
    }
    if (Status moved = Move(*row, E::kFormatAbandoned); !moved.ok()) return finish(moved);
    log::Info("format intent cleared: the volume was unstaged before its format finished",
              {{"volume_id", volume_id}});
    row.reset();
  }
  if (row && row->staging_path != path) row.reset();
  if (row) {
    recorded = StagedDevice(*row);
    serial = row->serial;
    encrypted = row->encrypted;
    if (Status moved = Move(*row, E::kUnstageRequested); !moved.ok()) return finish(moved);
  }
  const bool block = row && row->block;
  WhenDurable(finish, [=, this] {
    RunBlocking(
        loop_,
        [os = os_, serial, encrypted, recorded, block, path] {
          return os->UnmountVolumePath(serial, encrypted, recorded, block, path, true);
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
