// VolumeEngine's DeleteVolume steps: the request moves the volume's row to `deleting` and is
// journaled, Oxide is asked to delete the disk, and its answer completes the delete (a refusal
// for the disk's state is explained from what Oxide reports). A volume this replica has no row
// for is looked up first: Oxide deletes by id in any project. Loop thread only.
#include <utility>

#include "engine/disk_report.h"
#include "engine/disk_state_rules.h"
#include "engine/journal_outcome.h"
#include "engine/volume_engine.h"

namespace oxide::engine {

using backend::Disk;

namespace {
constexpr const char* kNoArgs = "{}";
}  // namespace

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
