#include "engine/disk_state_rules.h"

namespace oxide::engine {
namespace {

using backend::Disk;
using backend::DiskPhase;
using backend::DiskStatus;

std::string Reported(const Disk& disk) {
  if (disk.state.status == DiskStatus::kUnknown) {
    return "Oxide reports disk " + disk.name +
           " in a state this plugin version does not know (a newer Oxide?); nothing acts on it "
           "until Oxide moves it on";
  }
  std::string text = "Oxide reports disk " + disk.name + " " + DiskStatusName(disk.state.status);
  if (!disk.state.instance.empty()) text += " (instance " + disk.state.instance + ")";
  return text;
}

bool IsImport(DiskStatus status) {
  return status == DiskStatus::kImportReady || status == DiskStatus::kImportingFromUrl ||
         status == DiskStatus::kImportingFromBulkWrites || status == DiskStatus::kFinalizing;
}

// The unusable states: whether a person must act, or Oxide will move the disk on.
Status Unusable(const Disk& disk) {
  const DiskStatus status = disk.state.status;
  if (status == DiskStatus::kFaulted) {
    return FailedPrecondition(Reported(disk) + "; delete the volume and create it again");
  }
  if (IsImport(status)) {
    return FailedPrecondition(Reported(disk) +
                              ": an import made outside this plugin holds it; finish or delete "
                              "the import in Oxide");
  }
  if (status == DiskStatus::kDestroyed) {
    return Unavailable(Reported(disk) + ": it is being deleted; retry once it is gone");
  }
  return Unavailable(Reported(disk) + "; retry");
}

Status Moving(const Disk& disk) {
  return Unavailable(Reported(disk) + ": Oxide is still moving it on; retry");
}

}  // namespace

Status RefusalToKeep(const Disk& disk) {
  switch (backend::PhaseOf(disk.state.status)) {
    case DiskPhase::kDetached:
    case DiskPhase::kAttached:
      return Status::Ok();
    case DiskPhase::kTransitional:
      return Moving(disk);
    case DiskPhase::kUnusable:
      break;
  }
  return Unusable(disk);
}

Status RefusalToAttach(const Disk& disk, const std::string& node) {
  const bool here = disk.state.instance == node;
  switch (backend::PhaseOf(disk.state.status)) {
    case DiskPhase::kDetached:
      return Status::Ok();
    case DiskPhase::kAttached:
      if (here) return Status::Ok();
      return FailedPrecondition(
          Reported(disk) +
          ": it is attached to another instance; unpublish it from that node first");
    case DiskPhase::kTransitional:
      // Oxide attaches a disk that is still being created, and answers an attach to the
      // instance it is attaching to as done; the attach then waits for `attached`.
      if (disk.state.status == DiskStatus::kCreating) return Status::Ok();
      if (disk.state.status == DiskStatus::kAttaching && here) return Status::Ok();
      return Moving(disk);
    case DiskPhase::kUnusable:
      break;
  }
  return Unusable(disk);
}

DetachStep DetachStepFor(const Disk& disk, const std::string& node) {
  const DiskStatus status = disk.state.status;
  if (status == DiskStatus::kUnknown) return DetachStep::kRefuse;
  if (disk.state.instance != node || !backend::HoldsInstance(status)) {
    return DetachStep::kNothingToDo;  // Oxide names no instance, or another one
  }
  // Detaching: the detach waits for it to finish; attaching: Oxide refuses a detach until then.
  return status == DiskStatus::kAttaching ? DetachStep::kRefuse : DetachStep::kDetach;
}

Status RefusalToDetach(const Disk& disk) {
  if (disk.state.status == DiskStatus::kUnknown) return Unusable(disk);
  return Moving(disk);
}

Status RefusalToDelete(const Disk& disk) {
  switch (backend::PhaseOf(disk.state.status)) {
    case DiskPhase::kAttached:
      return FailedPrecondition(Reported(disk) +
                                ": the volume is still published; unpublish it first");
    case DiskPhase::kTransitional:
      if (disk.state.status == DiskStatus::kAttaching) {
        return FailedPrecondition(Reported(disk) +
                                  ": the volume is being published; unpublish it first");
      }
      return Moving(disk);
    case DiskPhase::kDetached:
      return Unavailable(Reported(disk) + " again after it refused the delete; retry");
    case DiskPhase::kUnusable:
      break;
  }
  if (disk.state.status == DiskStatus::kFaulted) {
    return Unavailable(Reported(disk) + " after it refused the delete; retry");
  }
  return Unusable(disk);
}

}  // namespace oxide::engine
