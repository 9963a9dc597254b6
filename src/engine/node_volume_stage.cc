// NodeVolumeEngine's stage and unstage, as named steps (node_volume_engine.h). Loop thread.
#include <chrono>

#include "engine/node_os_work.h"
#include "engine/node_reconciler.h"
#include "engine/node_volume_engine.h"
#include "engine/node_volume_state.h"
#include "metrics/plugin_metrics.h"
#include "node/path_rules.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using store::PublicationRow;
using store::StagingRow;
using E = NodeVolumeEvent;

bool Formats(const node::StagePlan& plan) {
  return plan.action == node::StageAction::kFormat || plan.action == node::StageAction::kReformat;
}

}  // namespace

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

// ---- Unstage (its entry is beside Unpublish's, in node_volume_engine.cc) ----

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

}  // namespace oxide::engine
