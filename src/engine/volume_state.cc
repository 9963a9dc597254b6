#include "engine/volume_state.h"

#include <array>
#include <string>

#include "engine/disk_naming.h"

namespace oxide::engine {

// ---- The volume's state machine ----

namespace {

using S = VolumeState;
using E = VolumeEvent;

constexpr VolumeRowState kNoRow = std::nullopt;

struct Transition {
  VolumeRowState from;
  VolumeEvent event;
  VolumeRowState to;
};

// Every legal transition; anything else is rejected. A publish or delete may start from
// NODE_READY because Oxide, not this record, decides whether the disk may move (a re-publish to
// the same instance is idempotent; a delete of an attached disk is refused by Oxide with the
// rule). A delete also takes over a row a failed commit left transitional: Oxide decides.
constexpr std::array kRequests = {
    Transition{kNoRow, E::kCreateRequested, S::kCreating},
    Transition{S::kCreated, E::kPublishRequested, S::kPublishing},
    Transition{S::kNodeReady, E::kPublishRequested, S::kPublishing},
    Transition{S::kCreated, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kNodeReady, E::kUnpublishRequested, S::kUnpublishing},
    Transition{S::kCreated, E::kDeleteRequested, S::kDeleting},
    Transition{S::kNodeReady, E::kDeleteRequested, S::kDeleting},
    Transition{S::kCreating, E::kDeleteRequested, S::kDeleting},
    Transition{S::kPublishing, E::kDeleteRequested, S::kDeleting},
    Transition{S::kUnpublishing, E::kDeleteRequested, S::kDeleting},
    Transition{S::kDeleting, E::kDeleteRequested, S::kDeleting},
};

// Oxide's answer holds whatever the row says: from every state (and from no row) a report moves
// the row to what Oxide reports.
VolumeRowState Reported(VolumeEvent event) {
  if (event == E::kOxideReportsDetached) return S::kCreated;
  if (event == E::kOxideReportsAttached) return S::kNodeReady;
  return kNoRow;
}

bool IsReport(VolumeEvent event) {
  return event == E::kOxideReportsDetached || event == E::kOxideReportsAttached ||
         event == E::kOxideReportsNoDisk;
}

constexpr std::array kStateNames = {"CREATING",   "CREATED",      "PUBLISHING",
                                    "NODE_READY", "UNPUBLISHING", "DELETING"};

std::string RowStateName(VolumeRowState state) {
  return state ? VolumeStateName(*state) : "no row";
}

}  // namespace

const char* VolumeStateName(VolumeState state) {
  return kStateNames[static_cast<size_t>(state)];
}

std::optional<VolumeState> VolumeStateFromName(std::string_view name) {
  for (size_t i = 0; i < kStateNames.size(); ++i) {
    if (name == kStateNames[i]) return static_cast<VolumeState>(i);
  }
  return std::nullopt;
}

const char* VolumeEventName(VolumeEvent event) {
  switch (event) {
    case E::kCreateRequested:
      return "create requested";
    case E::kPublishRequested:
      return "publish requested";
    case E::kUnpublishRequested:
      return "unpublish requested";
    case E::kDeleteRequested:
      return "delete requested";
    case E::kOxideReportsDetached:
      return "Oxide reports the disk detached";
    case E::kOxideReportsAttached:
      return "Oxide reports the disk attached";
    case E::kOxideReportsNoDisk:
      return "Oxide reports no disk";
  }
  return "unknown event";
}

StatusOr<VolumeRowState> NextState(VolumeRowState from, VolumeEvent event) {
  if (IsReport(event)) return Reported(event);
  for (const Transition& t : kRequests) {
    if (t.from == from && t.event == event) return t.to;
  }
  return FailedPrecondition(std::string("illegal volume state transition: ") +
                            VolumeEventName(event) + " in state " + RowStateName(from));
}

bool IsStable(VolumeState state) {
  return state == S::kCreated || state == S::kNodeReady;
}

// ---- What Oxide's report of a disk means ----

using backend::Disk;
using backend::DiskStatus;

bool IsAttachedOrAttaching(const Disk& disk) {
  return disk.state.status == DiskStatus::kAttached || disk.state.status == DiskStatus::kAttaching;
}

bool IsAttachedOrAttachingTo(const Disk& disk, const std::string& node) {
  return IsAttachedOrAttaching(disk) && disk.state.instance == node;
}

bool IsSettling(const Disk& disk) {
  return backend::PhaseOf(disk.state.status) == backend::DiskPhase::kTransitional;
}

std::string StatusText(const Disk& disk) {
  return backend::DiskStatusName(disk.state.status);
}

std::string DiskTypeOf(const Disk& disk) {
  return disk.disk_type.empty() ? backend::kDiskTypeDistributed : disk.disk_type;
}

StatusOr<store::VolumeRow> RowAfterReport(const Disk& disk, const std::string& co_name,
                                          VolumeRowState from) {
  const bool held = IsAttachedOrAttaching(disk);
  StatusOr<VolumeRowState> next = NextState(
      from, held ? VolumeEvent::kOxideReportsAttached : VolumeEvent::kOxideReportsDetached);
  if (!next.ok()) return next.status();
  if (!next->has_value()) return Internal("the state table dropped the row of a disk Oxide has");
  store::VolumeRow row{.disk_name = disk.name,
                       .volume_id = disk.id,
                       .co_name = co_name,
                       .size = disk.size,
                       .block_size = disk.block_size,
                       .state = VolumeStateName(**next),
                       .node_id = held ? disk.state.instance : ""};
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

// ---- What each controller operation answers for a disk in each Oxide state ----

namespace {

using backend::Disk;
using backend::DiskPhase;
using backend::DiskStatus;

std::string ReportedState(const Disk& disk) {
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
    return FailedPrecondition(ReportedState(disk) + "; delete the volume and create it again");
  }
  if (IsImport(status)) {
    return FailedPrecondition(ReportedState(disk) +
                              ": an import made outside this plugin holds it; finish or delete "
                              "the import in Oxide");
  }
  if (status == DiskStatus::kDestroyed) {
    return Unavailable(ReportedState(disk) + ": it is being deleted; retry once it is gone");
  }
  return Unavailable(ReportedState(disk) + "; retry");
}

Status Moving(const Disk& disk) {
  return Unavailable(ReportedState(disk) + ": Oxide is still moving it on; retry");
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
          ReportedState(disk) +
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
      return FailedPrecondition(ReportedState(disk) +
                                ": the volume is still published; unpublish it first");
    case DiskPhase::kTransitional:
      if (disk.state.status == DiskStatus::kAttaching) {
        return FailedPrecondition(ReportedState(disk) +
                                  ": the volume is being published; unpublish it first");
      }
      return Moving(disk);
    case DiskPhase::kDetached:
      return Unavailable(ReportedState(disk) + " again after it refused the delete; retry");
    case DiskPhase::kUnusable:
      break;
  }
  if (disk.state.status == DiskStatus::kFaulted) {
    return Unavailable(ReportedState(disk) + " after it refused the delete; retry");
  }
  return Unusable(disk);
}

}  // namespace oxide::engine
