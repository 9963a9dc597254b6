// VolumeEngine's steps that make and remove a volume's disk, CreateVolume and DeleteVolume.
// Create: the request is journaled with a `creating` row, Oxide is asked for the disk (through a
// clone snapshot for a clone, below), the disk is looked up until it settles, and the create
// completes from what Oxide reports: the volume's disk, or an ALREADY_EXISTS when the disk under
// that name is not the one asked for.
// Clone: Oxide has no clone call: the source disk is snapshotted into a temporary snapshot (named
// after the new volume, so a retry or a recovery finds it), the new disk is made from it, and the
// temporary snapshot is deleted before the operation completes, whatever its outcome. The journal
// entry records the temporary snapshot's name, so recovery after a crash at any step deletes it
// too.
// Delete: the request moves the volume's row to `deleting` and is journaled, Oxide is asked to
// delete the disk, and its answer completes the delete (a refusal for the disk's state is
// explained from what Oxide reports). A volume this replica has no row for is looked up first:
// Oxide deletes by id in any project.
// Loop thread only.
#include <nlohmann/json.hpp>
#include <utility>

#include "engine/disk_naming.h"
#include "engine/journal_entry.h"
#include "engine/volume_engine.h"
#include "engine/volume_state.h"
#include "util/log.h"

namespace oxide::engine {
namespace {

using backend::Disk;
using nlohmann::json;

constexpr const char* kNoArgs = "{}";

std::string GiB(uint64_t bytes) {
  constexpr uint64_t kGiB = 1ull << 30;
  if (bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  return std::to_string(bytes) + " bytes";
}

// Why the existing `disk` does not match the request `spec` (size, type, block size, content);
// empty when it does.
std::string RequestMismatch(const CreateSpec& spec, const Disk& disk) {
  if (spec.required > 0 && disk.size < spec.required) {
    return "its size " + GiB(disk.size) + " is below the required " + GiB(spec.required);
  }
  if (spec.limit > 0 && disk.size > spec.limit) {
    return "its size " + GiB(disk.size) + " is above the limit " + GiB(spec.limit);
  }
  if (DiskTypeOf(disk) != spec.disk_type) {
    return "it is a " + DiskTypeOf(disk) + " disk, not " + spec.disk_type;
  }
  if (spec.block_size_requested && disk.block_size != spec.block_size) {
    return "its block size is " + std::to_string(disk.block_size) + ", not " +
           std::to_string(spec.block_size);
  }
  return ContentMismatch(spec, disk);
}

}  // namespace

// ---- Create ----

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
  JobPtr job = StartJob(spec.disk_name, OperationKind::kCreate, CreateArgs(spec), before);
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
  AfterCommit(job, [this, job] { MakeDisk(job); });
}

void VolumeEngine::MakeDisk(const JobPtr& job) {
  job->spec.clone_source.empty() ? SendCreate(job) : TakeCloneSnapshot(job);
}

void VolumeEngine::SendCreate(const JobPtr& job) {
  const CreateSpec& spec = job->spec;
  backend::DiskCreate request{.name = spec.disk_name,
                              .description = spec.description,
                              .size = spec.size,
                              .block_size = spec.block_size,
                              .snapshot_id = spec.snapshot_id,
                              .disk_type = spec.disk_type};
  oxide_->CreateDisk(request, [this, alive = alive_, job](StatusOr<Disk> created) {
    if (*alive) CreateAnswered(job, std::move(created));
  });
}

void VolumeEngine::CreateAnswered(const JobPtr& job, StatusOr<Disk> created) {
  if (created.ok()) tracker_.Alias(job->key, created->id);
  Status status = created.status();
  // Created, already there, or unknown: the disk itself says what happened.
  if (status.ok() || status.code() == StatusCode::kAlreadyExists || OutcomeUnknown(status)) {
    return ConfirmCreate(job, status);
  }
  Revert(job, status);
}

void VolumeEngine::ConfirmCreate(const JobPtr& job, const Status& create_error) {
  auto settled = [](const Disk& disk) { return !IsSettling(disk); };
  PollDisk(job->spec.disk_name, job->give_up, options_.poll_first, settled,
           [this, job, create_error](StatusOr<Disk> found) {
             CreateSettled(job, create_error, std::move(found));
           });
}

void VolumeEngine::CreateSettled(const JobPtr& job, const Status& create_error,
                                 StatusOr<Disk> found) {
  if (found.ok()) return OxideReportsCreated(job, *found);
  const std::string& disk_name = job->spec.disk_name;
  const bool never_made = found.status().code() == StatusCode::kNotFound;
  if (never_made && create_error.code() == StatusCode::kNotFound) {
    // Recorded as made, but gone: make it again.
    if (job->before) job->vanished_volume_id = job->before->volume_id;
    return MakeDisk(job);
  }
  Status error = never_made && !create_error.ok() ? create_error : found.status();
  if (never_made && create_error.ok()) {
    error = Unavailable("Oxide created disk " + disk_name + " but it was gone right after; retry");
  }
  if (never_made && create_error.code() == StatusCode::kAlreadyExists) {
    // Deleted in between (e.g. by another replica): not a clash with another volume.
    error = Unavailable("Oxide reported disk " + disk_name +
                        " as existing, but it was gone right after; retry");
  }
  Revert(job, error);
}

void VolumeEngine::OxideReportsCreated(const JobPtr& job, const Disk& disk) {
  const CreateSpec& spec = job->spec;
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
    return Complete(job, clash, kJournalFailed,
                    job->before ? std::optional(*job->before) : std::nullopt);
  }
  VolumeRowState from =
      job->before ? VolumeStateFromName(job->before->state) : VolumeState::kCreating;
  StatusOr<store::VolumeRow> row = RowAfterReport(disk, spec.co_name, from);
  if (!row.ok()) return Revert(job, row.status());
  if (Status refused = RefusalToKeep(disk); !refused.ok()) {
    return Complete(job, refused, kJournalFailed, *row);
  }
  if (std::string mismatch = RequestMismatch(spec, disk); !mismatch.empty()) {
    return Complete(
        job,
        AlreadyExists("CSI volume " + json(spec.co_name).dump() + " already exists as Oxide disk " +
                      disk.name + " and does not match this request: " + mismatch),
        kJournalFailed, *row);
  }
  if (!job->vanished_volume_id.empty() && job->vanished_volume_id != disk.id) {
    log::Warn("re-creating volume: its earlier disk vanished from Oxide",
              {{"volume_name", spec.co_name},
               {"old_volume_id", job->vanished_volume_id},
               {"volume_id", disk.id},
               {"disk_name", disk.name}});
  }
  Complete(job, disk, kJournalDone, *row);
}

// ---- Clone ----

using backend::Snapshot;

void VolumeEngine::TakeCloneSnapshot(const JobPtr& job) {
  const CreateSpec& spec = job->spec;
  job->temp_snapshot = CloneSnapshotNameFor(spec.co_name);
  backend::SnapshotCreate request{.name = job->temp_snapshot,
                                  .description = CloneSourceDescriptionFor(spec.co_name),
                                  .disk = spec.clone_source};
  oxide_->CreateSnapshot(request, [this, alive = alive_, job](StatusOr<Snapshot> created) {
    if (*alive) CloneSnapshotAnswered(job, std::move(created));
  });
}

void VolumeEngine::CloneSnapshotAnswered(const JobPtr& job, StatusOr<Snapshot> created) {
  if (created.ok()) return CreateFromCloneSnapshot(job, *created, options_.poll_first);
  const Status error = created.status();
  if (error.code() == StatusCode::kNotFound) {
    return Revert(job, NotFound("source volume " + job->spec.clone_source +
                                " does not exist: Oxide has no disk with this id"));
  }
  if (error.code() != StatusCode::kAlreadyExists && !OutcomeUnknown(error)) {
    return Revert(job, error);
  }
  // Taken before (an earlier attempt) or unknown: the snapshot itself says.
  oxide_->GetSnapshot(job->temp_snapshot,
                      [this, alive = alive_, job, error](StatusOr<Snapshot> found) {
                        if (*alive) CloneSnapshotFound(job, error, std::move(found));
                      });
}

void VolumeEngine::CloneSnapshotFound(const JobPtr& job, const Status& create_error,
                                      StatusOr<Snapshot> found) {
  if (!found.ok()) {
    return Revert(job,
                  found.status().code() == StatusCode::kNotFound ? create_error : found.status());
  }
  if (found->disk_id != job->spec.clone_source) {
    // Left by an attempt to clone another volume under this name: Revert deletes it.
    return Revert(job, Unavailable("a temporary snapshot of volume " + found->disk_id +
                                   " was in the way of this clone; it is being removed, retry"));
  }
  CreateFromCloneSnapshot(job, *found, options_.poll_first);
}

void VolumeEngine::CreateFromCloneSnapshot(const JobPtr& job, const Snapshot& snapshot,
                                           std::chrono::milliseconds delay) {
  if (snapshot.state == backend::SnapshotStatus::kFaulted) {
    return Revert(job,
                  Internal("Oxide reports the temporary snapshot " + snapshot.name + " of volume " +
                           job->spec.clone_source + " faulted; retry the clone"));
  }
  if (snapshot.state != backend::SnapshotStatus::kReady) {
    if (clock_->Now() >= job->give_up) {
      return Revert(job, Status(StatusCode::kDeadlineExceeded,
                                "Oxide is still taking the temporary snapshot " + snapshot.name +
                                    " for the clone"));
    }
    return delayed_.RunAfter(delay, [this, job, id = snapshot.id, delay] {
      oxide_->GetSnapshot(id, [this, alive = alive_, job, delay](StatusOr<Snapshot> now) {
        if (!*alive) return;
        if (!now.ok()) return Revert(job, now.status());
        CreateFromCloneSnapshot(job, *now, std::min(delay * 2, options_.poll_max));
      });
    });
  }
  job->spec.snapshot_id = snapshot.id;
  job->spec.size = std::max(job->spec.size, snapshot.size);
  SendCreate(job);
}

void VolumeEngine::DropTemporarySnapshot(const std::string& name, Clock::TimePoint give_up,
                                         std::chrono::milliseconds delay,
                                         std::function<void()> then) {
  auto retry = [this, name, give_up, delay, then](const Status& why) {
    if (clock_->Now() >= give_up) {
      log::Error("could not delete a clone's temporary snapshot; delete it by hand",
                 {{"snapshot", name}, {"error", why.message()}});
      return then();
    }
    delayed_.RunAfter(delay, [this, name, give_up, delay, then] {
      DropTemporarySnapshot(name, give_up, std::min(delay * 2, options_.poll_max), then);
    });
  };
  oxide_->GetSnapshot(name, [this, alive = alive_, name, then, retry](StatusOr<Snapshot> found) {
    if (!*alive) return;
    if (!found.ok()) {
      if (found.status().code() == StatusCode::kNotFound) return then();
      return retry(found.status());
    }
    if (found->state == backend::SnapshotStatus::kCreating)
      return retry(Unavailable("still being created"));
    oxide_->DeleteSnapshot(found->id, [alive, then, retry](Status deleted) {
      if (!*alive) return;
      if (deleted.ok() || deleted.code() == StatusCode::kNotFound) return then();
      retry(deleted);
    });
  });
}

// ---- Delete ----

void VolumeEngine::Delete(const std::string& volume_id, OperationWaiter done) {
  affinity_.Check("VolumeEngine::Delete");
  if (tracker_.Admit(volume_id, "DeleteVolume", "", std::move(done)) !=
      OperationTracker::Admission::kStart) {
    return;
  }
  std::optional<store::VolumeRow> before = store_->FindByVolumeId(volume_id);
  if (!before) return DeleteUnrecorded(volume_id);
  if (!HoldAlso(volume_id, before->disk_name)) return;
  JobPtr job = StartJob(volume_id, OperationKind::kDelete, kNoArgs, before);
  // A row left in a transitional state (a failed commit) gives way too: Oxide decides.
  StatusOr<VolumeState> next =
      RequestedState(VolumeStateFromName(before->state).value_or(VolumeState::kCreated),
                     VolumeEvent::kDeleteRequested);
  if (!next.ok()) return Revert(job, next.status());
  store::VolumeRow row = *before;
  row.state = VolumeStateName(*next);
  store_->Put(row);
  AfterCommit(job, [this, job] { SendDelete(job); });
}

void VolumeEngine::DeleteUnrecorded(const std::string& volume_id) {
  // Looking first also names the disk, the volume's other lock key.
  oxide_->GetDisk(volume_id, [this, alive = alive_, volume_id](StatusOr<Disk> disk) {
    if (!*alive) return;
    if (!disk.ok()) {
      if (disk.status().code() == StatusCode::kNotFound) {
        return tracker_.Finish(volume_id, Disk{});
      }
      return tracker_.Finish(volume_id, disk.status());
    }
    if (!HoldAlso(volume_id, disk->name)) return;
    JobPtr job = StartJob(volume_id, OperationKind::kDelete, kNoArgs, std::nullopt);
    AfterCommit(job, [this, job] { SendDelete(job); });
  });
}

void VolumeEngine::SendDelete(const JobPtr& job) {
  oxide_->DeleteDisk(job->key, [this, alive = alive_, job](Status deleted) {
    if (*alive) DeleteAnswered(job, deleted);
  });
}

void VolumeEngine::DeleteAnswered(const JobPtr& job, const Status& deleted) {
  if (deleted.ok() || deleted.code() == StatusCode::kNotFound) {
    return Complete(job, Disk{}, kJournalDone, std::nullopt);
  }
  if (deleted.code() != StatusCode::kFailedPrecondition) return Revert(job, deleted);
  // Refused for the disk's state: the state Oxide reports now says what the CO should do.
  ExplainRefusal(job, deleted, /*gone_is_done=*/true,
                 [](const Disk& disk) { return RefusalToDelete(disk); });
}

}  // namespace oxide::engine
