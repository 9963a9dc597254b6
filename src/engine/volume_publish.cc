// VolumeEngine's ControllerPublishVolume steps: the request moves the volume's row to
// `publishing` (for the node) and is journaled, Oxide is asked to attach the disk to the node's
// instance, and the attach completes once Oxide reports the disk attached there (a refusal for
// the disk's state is explained from what Oxide reports). A volume this replica has no stable
// row for is observed in Oxide first. Loop thread only.
#include <utility>

#include "engine/disk_report.h"
#include "engine/disk_state_rules.h"
#include "engine/journal_outcome.h"
#include "engine/volume_engine.h"

namespace oxide::engine {

using backend::Disk;
using backend::DiskStatus;

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
    return RequestAttach(StartNodeJob(volume_id, OperationKind::kPublish, node_id, std::move(row)));
  }
  Observe(volume_id, [this, volume_id, node_id](StatusOr<Disk> disk,
                                                std::optional<store::VolumeRow> observed) {
    if (!disk.ok()) return tracker_.Finish(volume_id, disk.status());
    if (Status refused = RefusalToAttach(*disk, node_id); !refused.ok()) {
      return tracker_.Finish(volume_id, refused);
    }
    RequestAttach(StartNodeJob(volume_id, OperationKind::kPublish, node_id, std::move(observed)));
  });
}

void VolumeEngine::RequestAttach(const JobPtr& job) {
  StatusOr<VolumeState> next =
      RequestedState(VolumeStateFromName(job->before->state), VolumeEvent::kPublishRequested);
  if (!next.ok()) return Revert(job, next.status());
  store::VolumeRow row = *job->before;
  row.state = VolumeStateName(*next);
  row.node_id = job->node;
  store_->Put(row);
  AfterCommit(job, [this, job] {
    oxide_->AttachDisk(job->node, job->key, [this, alive = alive_, job](StatusOr<Disk> attached) {
      if (*alive) AttachAnswered(job, std::move(attached));
    });
  });
}

void VolumeEngine::AttachAnswered(const JobPtr& job, StatusOr<Disk> attached) {
  if (!attached.ok()) {
    if (attached.status().code() != StatusCode::kFailedPrecondition) {
      return Revert(job, attached.status());
    }
    return ExplainRefusal(job, attached.status(), /*gone_is_done=*/false,
                          [job](const Disk& d) { return RefusalToAttach(d, job->node); });
  }
  if (attached->state.status == DiskStatus::kAttached) {
    return AttachSettled(job, std::move(attached));
  }
  PollDisk(
      job->key, job->give_up, options_.poll_first,
      [](const Disk& d) { return d.state.status != DiskStatus::kAttaching; },
      [this, job](StatusOr<Disk> disk) { AttachSettled(job, std::move(disk)); });
}

void VolumeEngine::AttachSettled(const JobPtr& job, StatusOr<Disk> disk) {
  if (!disk.ok()) return Revert(job, disk.status());
  if (!IsAttachedOrAttachingTo(*disk, job->node)) {
    if (Status refused = RefusalToAttach(*disk, job->node); !refused.ok()) {
      return Revert(job, refused);
    }
    return Revert(job,
                  Unavailable("Oxide accepted the attach of disk " + disk->name + " to instance " +
                              job->node + " but reports it " + StatusText(*disk) + "; retry"));
  }
  StatusOr<store::VolumeRow> published =
      RowAfterReport(*disk, job->before->co_name, VolumeState::kPublishing);
  if (!published.ok()) return Revert(job, published.status());
  Complete(job, std::move(*disk), kJournalDone, *published);
}

}  // namespace oxide::engine
