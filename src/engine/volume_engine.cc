#include "engine/volume_engine.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/disk_naming.h"
#include "engine/disk_state_rules.h"
#include "engine/journal_outcome.h"
#include "engine/recovery_retry.h"
#include "engine/volume_state.h"
#include "metrics/plugin_metrics.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

// The log field naming a journal entry's key: a create's entry is keyed by the disk name (the
// volume id does not exist yet), every other entry by the volume id.
std::pair<const char*, std::string> KeyField(const store::OperationRow& entry) {
  return {entry.kind == "create" ? "disk_name" : "volume_id", entry.volume};
}

using backend::Disk;
using nlohmann::json;

constexpr const char* kDone = kJournalDone;
constexpr const char* kFailed = kJournalFailed;
constexpr const char* kRolledBack = kJournalRolledBack;

using backend::DiskStatus;

// Attached or on its way: the instance holds the disk (detaching counts as let go).
bool IsHeld(const Disk& disk) {
  return disk.state.status == DiskStatus::kAttached || disk.state.status == DiskStatus::kAttaching;
}

bool IsAttachedTo(const Disk& disk, const std::string& node) {
  return IsHeld(disk) && disk.state.instance == node;
}

// Oxide is moving the disk on by itself (made, repaired, attached or detached): wait for it.
bool IsSettling(const Disk& disk) {
  return backend::PhaseOf(disk.state.status) == backend::DiskPhase::kTransitional;
}

std::string StatusText(const Disk& disk) {
  return backend::DiskStatusName(disk.state.status);
}

// An answer without disk_type (older than local disks) is of a distributed disk.
std::string DiskTypeOf(const Disk& disk) {
  return disk.disk_type.empty() ? backend::kDiskTypeDistributed : disk.disk_type;
}

std::string GiB(uint64_t bytes) {
  constexpr uint64_t kGiB = 1ull << 30;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

std::string ContentMismatch(const CreateSpec& spec, const Disk& disk) {
  std::optional<std::string> cloned_from = ClonedFromDescription(disk.description);
  if (!spec.clone_source.empty()) {
    if (cloned_from == spec.clone_source) return "";
    return "it is not a clone of volume " + spec.clone_source;
  }
  if (cloned_from) return "it is a clone of volume " + *cloned_from;
  std::string made_from = disk.snapshot_id.value_or("");
  if (made_from == spec.snapshot_id) return "";
  if (spec.snapshot_id.empty()) return "it was made from snapshot " + made_from;
  return "it was not made from snapshot " + spec.snapshot_id;
}

StatusOr<store::VolumeRow> RowAfterReport(const Disk& disk, const std::string& co_name,
                                          VolumeRowState from) {
  StatusOr<VolumeRowState> next = NextState(
      from, IsHeld(disk) ? VolumeEvent::kOxideReportsAttached : VolumeEvent::kOxideReportsDetached);
  if (!next.ok()) return next.status();
  if (!next->has_value()) return Internal("the state table dropped the row of a disk Oxide has");
  store::VolumeRow row{.disk_name = disk.name,
                       .volume_id = disk.id,
                       .co_name = co_name,
                       .size = disk.size,
                       .block_size = disk.block_size,
                       .state = VolumeStateName(**next),
                       .node_id = IsHeld(disk) ? disk.state.instance : ""};
  if (row.co_name.empty()) row.co_name = CoNameFromDescription(disk.description).value_or("");
  return row;
}

StatusOr<VolumeState> RequestedState(VolumeRowState from, VolumeEvent request) {
  StatusOr<VolumeRowState> next = NextState(from, request);
  if (!next.ok()) return next.status();
  if (!next->has_value()) return Internal("the state table dropped a row on a request");
  return **next;
}

VolumeRowState StateOf(const std::optional<store::VolumeRow>& row) {
  return row ? VolumeStateFromName(row->state) : std::nullopt;
}

VolumeEngine::VolumeEngine(Clock* clock, backend::OxideClient* oxide, store::VolumeStore* store,
                           store::GroupCommit* commit, EngineOptions options)
    : clock_(clock),
      oxide_(oxide),
      store_(store),
      commit_(commit),
      options_(options),
      delayed_(clock) {}

VolumeEngine::~VolumeEngine() {
  *alive_ = false;
}

VolumeEngine::JobPtr VolumeEngine::StartJob(const std::string& key, const std::string& kind,
                                            const std::string& args,
                                            std::optional<store::VolumeRow> before) {
  auto job = std::make_shared<Job>();
  job->key = key;
  job->kind = kind;
  if (before) job->before = std::make_unique<store::VolumeRow>(std::move(*before));
  job->give_up = clock_->Now() + options_.operation_limit;
  job->op_id = store_->BeginOperation(kind, key, args);
  return job;
}

void VolumeEngine::AfterCommit(const JobPtr& job, std::function<void()> next) {
  commit_->WhenDurable([this, alive = alive_, job, next = std::move(next)](Status committed) {
    if (!*alive) return;
    if (!committed.ok()) {
      tracker_.Finish(job->key, committed);
      return;
    }
    next();
  });
}

void VolumeEngine::Complete(const JobPtr& job, OperationResult result, const char* journal_state,
                            const std::optional<store::VolumeRow>& row) {
  if (!job->temp_snapshot.empty()) {
    std::string temp = std::exchange(job->temp_snapshot, "");
    return DropTemporarySnapshot(
        temp, job->give_up, options_.poll_first,
        [this, job, result, journal_state, row] { Complete(job, result, journal_state, row); });
  }
  std::string remove = job->before ? job->before->disk_name : job->row_key;
  if (row) {
    store_->Put(*row);
  } else if (!remove.empty()) {
    store_->Remove(remove);
  }
  store_->FinishOperation(job->op_id, journal_state, JournalOutcome(result.status()));
  commit_->WhenDurable([this, alive = alive_, job, result = std::move(result)](Status committed) {
    if (!*alive) return;
    if (committed.ok()) return tracker_.Finish(job->key, result);
    // Oxide has acted (or refused) but its outcome is not recorded: the journal entry is still
    // pending. It is reconciled with Oxide as soon as the database takes writes again.
    tracker_.Finish(job->key, OperationResult(OutcomeNotRecorded("volume " + job->key, committed)));
    ReconcileLater(job->op_id);
  });
}

void VolumeEngine::ReconcileLater(int64_t op_id) {
  ReconcileEntryLater(delayed_, *store_, tracker_, op_id, [this](const store::OperationRow& e) {
    Recover(e, std::chrono::seconds(1));
  });
}

void VolumeEngine::Revert(const JobPtr& job, const Status& error) {
  // Back to the stable state the operation started from; a row that was itself transitional (a
  // create that never finished) is dropped: the next call starts over from what Oxide has.
  std::optional<store::VolumeRow> restore;
  if (job->before) restore = *job->before;
  if (restore && !IsStable(VolumeStateFromName(restore->state).value_or(VolumeState::kCreating))) {
    job->row_key = restore->disk_name;
    job->before.reset();
    restore.reset();
  }
  Complete(job, error, kFailed, restore);
}

// ---- CreateVolume ---------------------------------------------------------------------------

void VolumeEngine::Create(const CreateSpec& spec, const std::string& fingerprint,
                          OperationWaiter done) {
  affinity_.Check("VolumeEngine::Create");
  if (tracker_.Admit(spec.disk_name, "CreateVolume", fingerprint, std::move(done)) !=
      OperationTracker::Admission::kStart) {
    return;
  }
  std::optional<store::VolumeRow> before = store_->FindByDiskName(spec.disk_name);
  if (StateOf(before) == VolumeRowState(VolumeState::kDeleting)) {
    // A delete of this volume whose outcome could not be recorded yet (it is reconciled with
    // Oxide shortly): its disk may be gone on purpose, so nothing is made again until then.
    return tracker_.Finish(
        spec.disk_name,
        OperationResult(Aborted("operation DeleteVolume pending for volume " + before->volume_id +
                                "; retry when it has finished")));
  }
  // One lock per volume: its id, when known, is what DeleteVolume and the others hold.
  if (before && !HoldAlso(spec.disk_name, before->volume_id)) return;
  json args = {{"co_name", spec.co_name}, {"size", spec.size}, {"block_size", spec.block_size}};
  if (!spec.snapshot_id.empty()) args["snapshot_id"] = spec.snapshot_id;
  if (spec.disk_type != backend::kDiskTypeDistributed) args["disk_type"] = spec.disk_type;
  if (!spec.clone_source.empty()) {
    args["clone_source"] = spec.clone_source;
    args["temp_snapshot"] = CloneSnapshotNameFor(spec.co_name);
  }
  JobPtr job = StartJob(spec.disk_name, "create", args.dump(), before);
  job->row_key = spec.disk_name;
  if (!spec.clone_source.empty()) job->temp_snapshot = CloneSnapshotNameFor(spec.co_name);
  job->spec = spec;
  if (!before) {
    StatusOr<VolumeState> creating = RequestedState(std::nullopt, VolumeEvent::kCreateRequested);
    if (!creating.ok()) return Revert(job, creating.status());
    store_->Put({.disk_name = spec.disk_name,
                 .volume_id = "",
                 .co_name = spec.co_name,
                 .size = spec.size,
                 .block_size = spec.block_size,
                 .state = VolumeStateName(*creating),
                 .node_id = ""});
  }
  if (before && !before->volume_id.empty()) {
    // Made before: look it up instead of asking Oxide to make it again (NOT_FOUND: not posted).
    return AfterCommit(job, [this, job] { ConfirmCreate(job, NotFound("")); });
  }
  AfterCommit(job, [this, job] {
    job->spec.clone_source.empty() ? SendCreate(job, job->spec) : TakeCloneSnapshot(job, job->spec);
  });
}

void VolumeEngine::SendCreate(const JobPtr& job, const CreateSpec& spec) {
  backend::DiskCreate request{.name = spec.disk_name,
                              .description = spec.description,
                              .size = spec.size,
                              .block_size = spec.block_size,
                              .snapshot_id = spec.snapshot_id,
                              .disk_type = spec.disk_type};
  oxide_->CreateDisk(request, [this, alive = alive_, job](StatusOr<Disk> created) {
    if (!*alive) return;
    if (created.ok()) tracker_.Alias(job->key, created->id);
    Status status = created.status();
    // Created, already there, or unknown: the disk itself says what happened.
    if (status.ok() || status.code() == StatusCode::kAlreadyExists || OutcomeUnknown(status)) {
      return ConfirmCreate(job, status);
    }
    Revert(job, status);
  });
}

void VolumeEngine::ConfirmCreate(const JobPtr& job, const Status& create_error) {
  auto settled = [](const Disk& disk) { return !IsSettling(disk); };
  PollDisk(
      job->spec.disk_name, job->give_up, options_.poll_first, settled,
      [this, job, create_error](StatusOr<Disk> found) {
        const CreateSpec& spec = job->spec;
        if (!found.ok() && found.status().code() == StatusCode::kNotFound &&
            create_error.code() == StatusCode::kNotFound) {
          // Recorded as made, but gone: make it again.
          if (job->before) job->vanished_volume_id = job->before->volume_id;
          return spec.clone_source.empty() ? SendCreate(job, spec) : TakeCloneSnapshot(job, spec);
        }
        if (!found.ok()) {
          bool never_made = found.status().code() == StatusCode::kNotFound;
          Status error = never_made && !create_error.ok() ? create_error : found.status();
          if (never_made && create_error.ok()) {
            error = Unavailable("Oxide created disk " + spec.disk_name +
                                " but it was gone right after; retry");
          }
          if (never_made && create_error.code() == StatusCode::kAlreadyExists) {
            // Deleted in between (e.g. by another replica): not a clash with another volume.
            error = Unavailable("Oxide reported disk " + spec.disk_name +
                                " as existing, but it was gone right after; retry");
          }
          return Revert(job, error);
        }
        const Disk& disk = *found;
        if (Status held = tracker_.Claim(job->key, disk.id); !held.ok()) {
          return Revert(job, held);  // another operation holds the disk's id: leave it alone
        }
        std::optional<std::string> owner = CoNameFromDescription(disk.description);
        if (owner != spec.co_name) {
          // Not ours (or a 64-bit hash collision): never hand out another volume's disk.
          Status clash = AlreadyExists("Oxide disk " + disk.name +
                                       " already exists and does not belong to CSI volume " +
                                       json(spec.co_name).dump() +
                                       (owner ? " (it belongs to " + json(*owner).dump() + ")"
                                              : " (it was not made by this plugin)"));
          return Complete(job, clash, kFailed,
                          job->before ? std::optional(*job->before) : std::nullopt);
        }
        VolumeRowState from =
            job->before ? VolumeStateFromName(job->before->state) : VolumeState::kCreating;
        StatusOr<store::VolumeRow> row = RowAfterReport(disk, spec.co_name, from);
        if (!row.ok()) return Revert(job, row.status());
        if (Status refused = RefusalToKeep(disk); !refused.ok()) {
          return Complete(job, refused, kFailed, *row);
        }
        std::string mismatch;
        if (spec.required > 0 && disk.size < spec.required) {
          mismatch = "its size " + GiB(disk.size) + " is below the required " + GiB(spec.required);
        } else if (spec.limit > 0 && disk.size > spec.limit) {
          mismatch = "its size " + GiB(disk.size) + " is above the limit " + GiB(spec.limit);
        } else if (DiskTypeOf(disk) != spec.disk_type) {
          mismatch = "it is a " + DiskTypeOf(disk) + " disk, not " + spec.disk_type;
        } else if (spec.block_size_requested && disk.block_size != spec.block_size) {
          mismatch = "its block size is " + std::to_string(disk.block_size) + ", not " +
                     std::to_string(spec.block_size);
        } else {
          mismatch = ContentMismatch(spec, disk);
        }
        if (!mismatch.empty()) {
          return Complete(job,
                          AlreadyExists("CSI volume " + json(spec.co_name).dump() +
                                        " already exists as Oxide disk " + disk.name +
                                        " and does not match this request: " + mismatch),
                          kFailed, *row);
        }
        if (!job->vanished_volume_id.empty() && job->vanished_volume_id != disk.id) {
          log::Warn("re-creating volume: its earlier disk vanished from Oxide",
                    {{"volume_name", spec.co_name},
                     {"old_volume_id", job->vanished_volume_id},
                     {"volume_id", disk.id},
                     {"disk_name", disk.name}});
        }
        Complete(job, disk, kDone, *row);
      });
}

// ---- DeleteVolume ---------------------------------------------------------------------------

void VolumeEngine::Delete(const std::string& volume_id, OperationWaiter done) {
  affinity_.Check("VolumeEngine::Delete");
  if (tracker_.Admit(volume_id, "DeleteVolume", "", std::move(done)) !=
      OperationTracker::Admission::kStart) {
    return;
  }
  std::optional<store::VolumeRow> before = store_->FindByVolumeId(volume_id);
  if (!before) {
    // An id this plugin has not seen: Oxide deletes by id in any project, so look first (which
    // also names the disk, the volume's other lock key).
    return oxide_->GetDisk(volume_id, [this, alive = alive_, volume_id](StatusOr<Disk> disk) {
      if (!*alive) return;
      if (!disk.ok()) {
        if (disk.status().code() == StatusCode::kNotFound) {
          return tracker_.Finish(volume_id, Disk{});
        }
        return tracker_.Finish(volume_id, disk.status());
      }
      if (!HoldAlso(volume_id, disk->name)) return;
      JobPtr job = StartJob(volume_id, "delete", json::object().dump(), std::nullopt);
      AfterCommit(job, [this, job, volume_id] { ContinueDelete(job, volume_id); });
    });
  }
  if (!HoldAlso(volume_id, before->disk_name)) return;
  JobPtr job = StartJob(volume_id, "delete", json::object().dump(), before);
  // A row left in a transitional state (a failed commit) gives way too: Oxide decides.
  StatusOr<VolumeState> next =
      RequestedState(VolumeStateFromName(before->state).value_or(VolumeState::kCreated),
                     VolumeEvent::kDeleteRequested);
  if (!next.ok()) return Revert(job, next.status());
  store::VolumeRow row = *before;
  row.state = VolumeStateName(*next);
  store_->Put(row);
  AfterCommit(job, [this, job, volume_id] { ContinueDelete(job, volume_id); });
}

void VolumeEngine::ContinueDelete(const JobPtr& job, const std::string& volume_id) {
  oxide_->DeleteDisk(volume_id, [this, alive = alive_, job, volume_id](Status deleted) {
    if (!*alive) return;
    if (deleted.ok() || deleted.code() == StatusCode::kNotFound) {
      return Complete(job, Disk{}, kDone, std::nullopt);
    }
    if (deleted.code() != StatusCode::kFailedPrecondition) return Revert(job, deleted);
    // Refused for the disk's state: the state Oxide reports now says what the CO should do.
    ExplainRefusal(job, volume_id, deleted, /*gone_is_done=*/true,
                   [](const Disk& disk) { return RefusalToDelete(disk); });
  });
}

// ---- ControllerPublishVolume ----------------------------------------------------------------

void VolumeEngine::Publish(const std::string& volume_id, const std::string& node_id,
                           const std::string& fingerprint, OperationWaiter done) {
  affinity_.Check("VolumeEngine::Publish");
  if (tracker_.Admit(volume_id, "ControllerPublishVolume", fingerprint, std::move(done)) !=
      OperationTracker::Admission::kStart) {
    return;
  }
  std::optional<store::VolumeRow> row = store_->FindByVolumeId(volume_id);
  VolumeState state = row ? VolumeStateFromName(row->state).value_or(VolumeState::kCreating)
                          : VolumeState::kCreating;
  if (row && IsStable(state)) {
    if (!HoldAlso(volume_id, row->disk_name)) return;
    return ContinuePublish(StartJob(volume_id, "publish", json{{"node", node_id}}.dump(), row),
                           volume_id, node_id, *row);
  }
  Observe(volume_id, [this, volume_id, node_id](StatusOr<Disk> disk,
                                                std::optional<store::VolumeRow> observed) {
    if (!disk.ok()) return tracker_.Finish(volume_id, disk.status());
    if (Status refused = RefusalToAttach(*disk, node_id); !refused.ok()) {
      return tracker_.Finish(volume_id, refused);
    }
    ContinuePublish(StartJob(volume_id, "publish", json{{"node", node_id}}.dump(), observed),
                    volume_id, node_id, *observed);
  });
}

void VolumeEngine::ContinuePublish(const JobPtr& job, const std::string& volume_id,
                                   const std::string& node_id, store::VolumeRow row) {
  StatusOr<VolumeState> next =
      RequestedState(VolumeStateFromName(row.state), VolumeEvent::kPublishRequested);
  if (!next.ok()) return Revert(job, next.status());
  row.state = VolumeStateName(*next);
  row.node_id = node_id;
  store_->Put(row);
  AfterCommit(job, [this, job, volume_id, node_id, row] {
    oxide_->AttachDisk(
        node_id, volume_id,
        [this, alive = alive_, job, volume_id, node_id](StatusOr<Disk> attached) {
          if (!*alive) return;
          if (!attached.ok()) {
            if (attached.status().code() != StatusCode::kFailedPrecondition) {
              return Revert(job, attached.status());
            }
            return ExplainRefusal(job, volume_id, attached.status(), /*gone_is_done=*/false,
                                  [node_id](const Disk& d) { return RefusalToAttach(d, node_id); });
          }
          auto done = [this, job, node_id](StatusOr<Disk> disk) {
            if (!disk.ok()) return Revert(job, disk.status());
            if (!IsAttachedTo(*disk, node_id)) {
              if (Status refused = RefusalToAttach(*disk, node_id); !refused.ok()) {
                return Revert(job, refused);
              }
              return Revert(job, Unavailable("Oxide accepted the attach of disk " + disk->name +
                                             " to instance " + node_id + " but reports it " +
                                             StatusText(*disk) + "; retry"));
            }
            StatusOr<store::VolumeRow> published =
                RowAfterReport(*disk, job->before->co_name, VolumeState::kPublishing);
            if (!published.ok()) return Revert(job, published.status());
            Complete(job, std::move(*disk), kDone, *published);
          };
          if (attached->state.status == DiskStatus::kAttached) {
            return done(std::move(attached));
          }
          PollDisk(
              volume_id, job->give_up, options_.poll_first,
              [](const Disk& d) { return d.state.status != DiskStatus::kAttaching; }, done);
        });
  });
}

// ---- ControllerUnpublishVolume --------------------------------------------------------------

void VolumeEngine::Unpublish(const std::string& volume_id, const std::string& node_id,
                             OperationWaiter done) {
  affinity_.Check("VolumeEngine::Unpublish");
  if (tracker_.Admit(volume_id, "ControllerUnpublishVolume", node_id, std::move(done)) !=
      OperationTracker::Admission::kStart) {
    return;
  }
  std::optional<store::VolumeRow> row = store_->FindByVolumeId(volume_id);
  bool stable = row && IsStable(VolumeStateFromName(row->state).value_or(VolumeState::kCreating));
  if (stable && !node_id.empty()) {
    if (!HoldAlso(volume_id, row->disk_name)) return;
    return ContinueUnpublish(StartJob(volume_id, "unpublish", json{{"node", node_id}}.dump(), row),
                             volume_id, node_id, row);
  }
  // Which instance holds the disk, or whether it exists at all, is Oxide's to say.
  Observe(volume_id, [this, volume_id, node_id](StatusOr<Disk> disk,
                                                std::optional<store::VolumeRow> observed) {
    if (!disk.ok()) {
      // A volume that does not exist is not published anywhere.
      if (disk.status().code() == StatusCode::kNotFound) return tracker_.Finish(volume_id, Disk{});
      return tracker_.Finish(volume_id, disk.status());
    }
    std::string holder = node_id.empty() ? disk->state.instance : node_id;
    switch (DetachStepFor(*disk, holder)) {
      case DetachStep::kNothingToDo:
        return tracker_.Finish(volume_id, *disk);  // not attached to that node
      case DetachStep::kRefuse:
        return tracker_.Finish(volume_id, RefusalToDetach(*disk));
      case DetachStep::kDetach:
        break;
    }
    ContinueUnpublish(StartJob(volume_id, "unpublish", json{{"node", holder}}.dump(), observed),
                      volume_id, holder, observed);
  });
}

void VolumeEngine::ContinueUnpublish(const JobPtr& job, const std::string& volume_id,
                                     std::string node_id,
                                     const std::optional<store::VolumeRow>& row) {
  if (row) {
    StatusOr<VolumeState> next =
        RequestedState(VolumeStateFromName(row->state), VolumeEvent::kUnpublishRequested);
    if (!next.ok()) return Revert(job, next.status());
    store::VolumeRow updated = *row;
    updated.state = VolumeStateName(*next);
    store_->Put(updated);
  }
  // What the row is while the detach runs (nullopt: none was written).
  VolumeRowState during = row ? VolumeRowState(VolumeState::kUnpublishing) : std::nullopt;
  AfterCommit(job, [this, job, volume_id, node_id, during] {
    oxide_->DetachDisk(
        node_id, volume_id,
        [this, alive = alive_, job, volume_id, node_id, during](StatusOr<Disk> detached) {
          if (!*alive) return;
          if (detached.ok() && detached->state.status == DiskStatus::kDetached) {
            return Unpublished(job, *detached, during);
          }
          Status error = detached.status();
          bool refused = error.code() == StatusCode::kFailedPrecondition ||
                         error.code() == StatusCode::kAborted ||
                         error.code() == StatusCode::kNotFound;
          if (!detached.ok() && !refused) return Revert(job, error);
          // Gone, refused for its state, or still detaching: what Oxide reports decides.
          PollDisk(
              volume_id, job->give_up, options_.poll_first,
              [](const Disk& d) { return d.state.status != DiskStatus::kDetaching; },
              [this, job, node_id, during, error](StatusOr<Disk> disk) {
                if (!disk.ok() && disk.status().code() == StatusCode::kNotFound) {
                  return Complete(job, Disk{}, kDone, std::nullopt);
                }
                if (!disk.ok()) return Revert(job, disk.status());
                switch (DetachStepFor(*disk, node_id)) {
                  case DetachStep::kNothingToDo:
                    return Unpublished(job, *disk, during);
                  case DetachStep::kRefuse:
                    return Revert(job, RefusalToDetach(*disk));
                  case DetachStep::kDetach:
                    break;
                }
                Revert(job, !error.ok()
                                ? error
                                : Unavailable("disk " + disk->name + " is still attached to " +
                                              node_id + "; retry"));
              });
        });
  });
}

void VolumeEngine::Unpublished(const JobPtr& job, const Disk& disk, VolumeRowState during) {
  std::string co_name = job->before ? job->before->co_name : "";
  StatusOr<store::VolumeRow> unpublished = RowAfterReport(disk, co_name, during);
  if (!unpublished.ok()) return Revert(job, unpublished.status());
  Complete(job, disk, kDone, *unpublished);
}

bool VolumeEngine::HoldAlso(const std::string& key, const std::string& also) {
  if (also.empty() || also == key) return true;
  Status held = tracker_.Claim(key, also);
  if (held.ok()) return true;
  tracker_.Finish(key, OperationResult(held));
  return false;
}

void VolumeEngine::ExplainRefusal(const JobPtr& job, const std::string& volume_id,
                                  const Status& refusal, bool gone_is_done,
                                  std::function<Status(const Disk&)> rule) {
  oxide_->GetDisk(volume_id, [this, alive = alive_, job, refusal, gone_is_done,
                              rule = std::move(rule)](StatusOr<Disk> disk) {
    if (!*alive) return;
    const bool gone = !disk.ok() && disk.status().code() == StatusCode::kNotFound;
    if (gone && gone_is_done) return Complete(job, Disk{}, kDone, std::nullopt);
    if (!disk.ok()) return Revert(job, gone ? disk.status() : refusal);
    Status why = rule(*disk);
    if (why.ok()) return Revert(job, refusal);
    Revert(job, Status(why.code(), why.message() + " (Oxide: " + refusal.message() + ")"));
  });
}

// ---- shared steps ---------------------------------------------------------------------------

void VolumeEngine::PollDisk(const std::string& disk, Clock::TimePoint give_up,
                            std::chrono::milliseconds delay,
                            std::function<bool(const Disk&)> settled, backend::Done<Disk> done) {
  oxide_->GetDisk(disk, [this, alive = alive_, disk, give_up, delay, settled = std::move(settled),
                         done = std::move(done)](StatusOr<Disk> found) mutable {
    if (!*alive) return;
    if (!found.ok() || settled(*found)) return done(std::move(found));
    if (clock_->Now() >= give_up) {
      return done(
          Status(StatusCode::kDeadlineExceeded,
                 "Oxide still reports disk " + found->name + " " + StatusText(*found) + " after " +
                     std::to_string(
                         std::chrono::duration_cast<std::chrono::seconds>(options_.operation_limit)
                             .count()) +
                     " s"));
    }
    auto next_delay = std::min(delay * 2, options_.poll_max);
    delayed_.RunAfter(delay, [this, disk, give_up, next_delay, settled = std::move(settled),
                              done = std::move(done)]() mutable {
      PollDisk(disk, give_up, next_delay, std::move(settled), std::move(done));
    });
  });
}

void VolumeEngine::Observe(
    const std::string& volume_id,
    std::function<void(StatusOr<Disk>, std::optional<store::VolumeRow>)> then) {
  oxide_->GetDisk(
      volume_id, [this, alive = alive_, volume_id, then = std::move(then)](StatusOr<Disk> disk) {
        if (!*alive) return;
        // The disk's name is the volume's other lock key: held before its row is touched.
        if (disk.ok() && !HoldAlso(volume_id, disk->name)) return;
        std::optional<store::VolumeRow> known = store_->FindByVolumeId(volume_id);
        if (!disk.ok()) {
          if (disk.status().code() == StatusCode::kNotFound) {
            if (known) store_->Remove(known->disk_name);
            return then(
                NotFound("volume " + volume_id + " does not exist: Oxide has no disk with this id"),
                std::nullopt);
          }
          return then(disk.status(), std::nullopt);
        }
        StatusOr<store::VolumeRow> row =
            RowAfterReport(*disk, known ? known->co_name : "", StateOf(known));
        if (!row.ok()) return then(row.status(), std::nullopt);
        store_->Put(*row);
        then(std::move(disk), *row);
      });
}

// ---- recovery -------------------------------------------------------------------------------

size_t VolumeEngine::RecoverUnfinished() {
  affinity_.Check("VolumeEngine::RecoverUnfinished");
  std::vector<store::OperationRow> entries;
  for (store::OperationRow& entry : store_->UnfinishedOperations()) {
    // Snapshot operations are the SnapshotEngine's.
    if (entry.kind.rfind("snapshot_", 0) != 0) entries.push_back(std::move(entry));
  }
  // Newest first: when a volume has several open entries, the newest one decides.
  std::vector<int64_t> superseded;
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
    const store::OperationRow& entry = *it;
    if (tracker_.Busy(entry.volume)) {
      // An older entry for the same volume: the newer one decides.
      store_->FinishOperation(entry.id, kRolledBack, "superseded by a later operation");
      superseded.push_back(entry.id);
      continue;
    }
    tracker_.Admit(entry.volume, "recovery of " + entry.kind, "", [](const OperationResult&) {});
    // The volume's other lock key, when this replica's row knows it (one lock per volume).
    std::optional<store::VolumeRow> row = entry.kind == "create"
                                              ? store_->FindByDiskName(entry.volume)
                                              : store_->FindByVolumeId(entry.volume);
    const std::string other = !row ? "" : entry.kind == "create" ? row->volume_id : row->disk_name;
    if (!other.empty() && !tracker_.Claim(entry.volume, other).ok()) {
      // A newer entry of the same volume, under its other key, decides.
      tracker_.Finish(entry.volume, Disk{});
      store_->FinishOperation(entry.id, kRolledBack, "superseded by a later operation");
      superseded.push_back(entry.id);
    }
  }
  if (!superseded.empty()) {
    // Closing them could not be recorded: still pending, each is reconciled on its own once the
    // database takes writes again (never left open until the next start).
    commit_->WhenDurable([this, alive = alive_, superseded](Status committed) {
      if (!*alive || committed.ok()) return;
      for (int64_t id : superseded)
        ReconcileLater(id);
    });
  }
  for (const store::OperationRow& entry : entries) {
    if (store_->FindUnfinishedOperation(entry.id)) {
      Recover(entry, std::chrono::seconds(1));
    }
  }
  if (!entries.empty()) {
    log::Info("reconciling unfinished operations with Oxide",
              {{"count", std::to_string(entries.size())}});
  }
  return entries.size();
}

void VolumeEngine::Recover(const store::OperationRow& entry,
                           std::chrono::milliseconds retry_delay) {
  const std::string& key = entry.volume;
  std::string co_name = json::parse(entry.args, nullptr, false).value("co_name", "");
  std::string node = json::parse(entry.args, nullptr, false).value("node", "");
  std::optional<store::VolumeRow> before =
      entry.kind == "create" ? store_->FindByDiskName(key) : store_->FindByVolumeId(key);
  if (co_name.empty() && before) co_name = before->co_name;

  oxide_->GetDisk(key, [this, alive = alive_, entry, retry_delay, key, co_name, node,
                        before](StatusOr<Disk> disk) {
    if (!*alive) return;
    if (backend::IsInAnotherProject(disk.status())) {
      // Never the project's (a delete of a foreign id that crashed before its lookup).
      return FinishRecovery(entry, kRolledBack, std::nullopt, key);
    }
    if (!disk.ok() && disk.status().code() != StatusCode::kNotFound) {
      return RetryRecoveryLater(delayed_, entry, KeyField(entry), disk.status(), retry_delay,
                                options_.recovery_retry_max,
                                [this, entry](auto next) { Recover(entry, next); });
    }
    if (disk.ok() && entry.kind == "create" && IsSettling(*disk)) {
      delayed_.RunAfter(retry_delay, [this, entry] { Recover(entry, std::chrono::seconds(1)); });
      return;
    }
    if (!disk.ok()) {
      // The disk does not exist: a create never happened, a delete did.
      const char* state = entry.kind == "delete" || entry.kind == "unpublish" ? kDone
                          : entry.kind == "create"                            ? kRolledBack
                                                                              : kFailed;
      if (before) store_->Remove(before->disk_name);
      return FinishRecovery(entry, state, std::nullopt, key);
    }
    StatusOr<store::VolumeRow> reported = RowAfterReport(*disk, co_name, StateOf(before));
    if (!reported.ok()) {
      return RetryRecoveryLater(delayed_, entry, KeyField(entry), reported.status(), retry_delay,
                                options_.recovery_retry_max,
                                [this, entry](auto next) { Recover(entry, next); });
    }
    const store::VolumeRow& row = *reported;
    const char* state = kRolledBack;
    if (entry.kind == "create") state = kDone;
    if (entry.kind == "publish" && IsAttachedTo(*disk, node)) state = kDone;
    if (entry.kind == "unpublish" && !IsAttachedTo(*disk, node)) state = kDone;
    if (before && before->disk_name != row.disk_name) store_->Remove(before->disk_name);
    FinishRecovery(entry, state, row, key);
  });
}

void VolumeEngine::FinishRecovery(const store::OperationRow& entry, const char* journal_state,
                                  const std::optional<store::VolumeRow>& row,
                                  const std::string& key) {
  // A clone interrupted at any step: its temporary snapshot goes before the entry is closed.
  std::string temp = json::parse(entry.args, nullptr, false).value("temp_snapshot", "");
  if (!temp.empty()) {
    store::OperationRow without = entry;
    without.args = json::object().dump();
    return DropTemporarySnapshot(temp, clock_->Now() + options_.operation_limit,
                                 options_.poll_first, [this, without, journal_state, row, key] {
                                   FinishRecovery(without, journal_state, row, key);
                                 });
  }
  if (row) store_->Put(*row);
  store_->FinishOperation(entry.id, journal_state, "reconciled with Oxide");
  metrics::Families().recovery_entries.With({journal_state}).Increment();
  // A create's journal key is the disk name; the others' the volume id (KeyField).
  std::pair<const char*, std::string> key_field = KeyField(entry);
  std::string volume_id = row ? row->volume_id : "";
  if (volume_id == key) volume_id.clear();  // already the key field
  commit_->WhenDurable([this, alive = alive_, key, key_field, volume_id, id = entry.id,
                        kind = entry.kind, journal_state,
                        state = row ? row->state : "deleted"](Status committed) {
    if (!*alive) return;
    if (!committed.ok()) {
      // Still pending: tried again once the database takes writes.
      log::Warn("could not record the reconciliation of an unfinished operation; trying again",
                {{key_field.first, key},
                 {"volume_id", volume_id},
                 {"operation", kind},
                 {"error", committed.message()}});
      tracker_.Finish(key, OperationResult(committed));
      return ReconcileLater(id);
    }
    log::Info("reconciled an unfinished operation", {{key_field.first, key},
                                                     {"volume_id", volume_id},
                                                     {"operation", kind},
                                                     {"outcome", journal_state},
                                                     {"state", state}});
    tracker_.Finish(key, Disk{});
  });
}

}  // namespace oxide::engine
