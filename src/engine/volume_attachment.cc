// VolumeEngine's attachment steps, ControllerPublishVolume and ControllerUnpublishVolume.
// Publish: the request moves the volume's row to `publishing` (for the node) and is journaled,
// Oxide is asked to attach the disk to the node's instance, and the attach completes once Oxide
// reports the disk attached there (a refusal for the disk's state is explained from what Oxide
// reports). A volume this replica has no stable row for is observed in Oxide first.
// Unpublish: the request moves the volume's row (when there is one) to `unpublishing` and is
// journaled, Oxide is asked to detach the disk from the node's instance, and the detach completes
// once Oxide reports the disk no longer attached there. A volume without a stable row, or a call
// naming no node, is observed in Oxide first (which instance holds the disk is Oxide's to say).
// Loop thread only.
#include <utility>

#include "engine/journal_entry.h"
#include "engine/volume_engine.h"
#include "engine/volume_state.h"

namespace oxide::engine {

using backend::Disk;
using backend::DiskStatus;

// ---- Publish ----

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

// ---- Unpublish ----

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
    return RequestDetach(
        StartNodeJob(volume_id, OperationKind::kUnpublish, node_id, std::move(row)));
  }
  Observe(volume_id, [this, volume_id, node_id](StatusOr<Disk> disk,
                                                std::optional<store::VolumeRow> observed) {
    UnpublishObserved(volume_id, node_id, std::move(disk), std::move(observed));
  });
}

void VolumeEngine::UnpublishObserved(const std::string& volume_id, const std::string& node_id,
                                     StatusOr<Disk> disk,
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
  RequestDetach(StartNodeJob(volume_id, OperationKind::kUnpublish, holder, std::move(observed)));
}

void VolumeEngine::RequestDetach(const JobPtr& job) {
  if (job->before) {
    StatusOr<VolumeState> next =
        RequestedState(VolumeStateFromName(job->before->state), VolumeEvent::kUnpublishRequested);
    if (!next.ok()) return Revert(job, next.status());
    store::VolumeRow updated = *job->before;
    updated.state = VolumeStateName(*next);
    store_->Put(updated);
  }
  AfterCommit(job, [this, job] {
    oxide_->DetachDisk(job->node, job->key, [this, alive = alive_, job](StatusOr<Disk> detached) {
      if (*alive) DetachAnswered(job, std::move(detached));
    });
  });
}

void VolumeEngine::DetachAnswered(const JobPtr& job, StatusOr<Disk> detached) {
  if (detached.ok() && detached->state.status == DiskStatus::kDetached) {
    return Unpublished(job, *detached);
  }
  Status error = detached.status();
  bool refused = error.code() == StatusCode::kFailedPrecondition ||
                 error.code() == StatusCode::kAborted || error.code() == StatusCode::kNotFound;
  if (!detached.ok() && !refused) return Revert(job, error);
  // Gone, refused for its state, or still detaching: what Oxide reports decides.
  PollDisk(
      job->key, job->give_up, options_.poll_first,
      [](const Disk& d) { return d.state.status != DiskStatus::kDetaching; },
      [this, job, error](StatusOr<Disk> disk) { DetachSettled(job, error, std::move(disk)); });
}

void VolumeEngine::DetachSettled(const JobPtr& job, const Status& detach_error,
                                 StatusOr<Disk> disk) {
  if (!disk.ok() && disk.status().code() == StatusCode::kNotFound) {
    return Complete(job, Disk{}, kJournalDone, std::nullopt);
  }
  if (!disk.ok()) return Revert(job, disk.status());
  switch (DetachStepFor(*disk, job->node)) {
    case DetachStep::kNothingToDo:
      return Unpublished(job, *disk);
    case DetachStep::kRefuse:
      return Revert(job, RefusalToDetach(*disk));
    case DetachStep::kDetach:
      break;
  }
  Revert(job, !detach_error.ok() ? detach_error
                                 : Unavailable("disk " + disk->name + " is still attached to " +
                                               job->node + "; retry"));
}

void VolumeEngine::Unpublished(const JobPtr& job, const Disk& disk) {
  std::string co_name = job->before ? job->before->co_name : "";
  // The row RequestDetach wrote while the detach ran (none when the volume had no row).
  const VolumeRowState during =
      job->before ? VolumeRowState(VolumeState::kUnpublishing) : std::nullopt;
  StatusOr<store::VolumeRow> unpublished = RowAfterReport(disk, co_name, during);
  if (!unpublished.ok()) return Revert(job, unpublished.status());
  Complete(job, disk, kJournalDone, *unpublished);
}

}  // namespace oxide::engine
