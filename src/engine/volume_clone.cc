// VolumeEngine's clone steps. Oxide has no clone call: the source disk is snapshotted into a
// temporary snapshot (named after the new volume, so a retry or a recovery finds it), the new
// disk is made from it, and the temporary snapshot is deleted before the operation completes,
// whatever its outcome. The journal entry records the temporary snapshot's name, so recovery
// after a crash at any step deletes it too. Loop thread only.
#include <nlohmann/json.hpp>

#include "engine/disk_naming.h"
#include "engine/journal_outcome.h"
#include "engine/volume_engine.h"
#include "util/log.h"

namespace oxide::engine {

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

}  // namespace oxide::engine
